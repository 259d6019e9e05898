import type { Tx } from '../database/database';

/**
 * What webhook subscriptions need from modules above events (which emit through it):
 * declared here, implemented by their repositories, bound in the composition root
 * (`src/ports.module.ts`), so events imports neither.
 */
export abstract class OrganizationLocks {
  /** Locks the organization's row for the transaction (subscription counts serialize on it); null if there is none. */
  abstract lockOrganization(id: string, tx?: Tx): Promise<unknown>;
}

export abstract class WebhookIdentities {
  /** The active identity named by id or handle, with its organization; null if there is none. */
  abstract findActiveByIdOrHandle(
    idOrHandle: string,
    tx?: Tx,
  ): Promise<{ id: string; organizationId: string | null } | null>;
}
