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
