import type { Tx } from '../database/database';

/**
 * What minting needs from the identities module, which sits above keys (it mints and
 * revokes keys itself): the identity a new agent key binds to, locked for the
 * minting transaction. Declared here, implemented by `IdentitiesRepository`, bound in
 * the composition root (`src/ports.module.ts`), so keys never imports identities.
 */
export abstract class BindableIdentities {
  /** The active identity `id` and its organization, locked; null if there is none. */
  abstract lockBindable(id: string, tx?: Tx): Promise<{ id: string; organizationId: string | null } | null>;
}

/**
 * What minting needs from the console module (organizations sit above keys): the
 * organization's cap on a new key's lifetime (docs/api.md §2). Implemented by
 * `ConsoleRepository`, bound in the composition root.
 */
export abstract class KeyLifetimeLimits {
  /** The organization `id` with its `max_key_lifetime_days` (null: no cap); null if there is none. */
  abstract organization(id: string, tx?: Tx): Promise<{ maxKeyLifetimeDays: number | null } | null>;
}
