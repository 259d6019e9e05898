import { forbidden, notFound } from '../common/app-error';
import type { Principal } from '../auth/principal';

/**
 * Who may do what to one identity, once the guard has let the credential kind
 * through (src/auth/surfaces.ts: agent keys never reach create or delete, for
 * instance). Pure functions of the principal and the row, so the rules read like
 * CONTRACT §3 and are unit-tested on their own.
 */
export type IdentityAction = 'read' | 'readSettings' | 'editCard' | 'changeSettings' | 'delete';

export type SettingField = 'enabled' | 'allow_public_egress' | 'publicly_discoverable' | 'filter_mode';

/**
 * CONTRACT §3 "Settings field" table, the own-key column: an admin key or Console
 * user of the identity's organization may change every field; the identity's own
 * key only these (SEED-SPEC §5: publicly_discoverable and filter_mode need an
 * admin-scoped key or a same-organization Console user).
 */
export const OWN_KEY_MAY_CHANGE: Readonly<Record<SettingField, boolean>> = {
  enabled: true,
  allow_public_egress: true,
  publicly_discoverable: false,
  filter_mode: false,
};

/** The parts of an identity that decide access. */
export interface IdentityOwnership {
  id: string;
  organizationId: string | null;
  claimed: boolean;
}

export const identityNotFound = () => notFound('identity_not_found', 'No identity with that handle is visible to you.');
export const identityUnclaimed = () => forbidden('identity_unclaimed', 'The identity is not claimed yet; claim it from the Console first.');

/**
 * Throws unless `principal` may perform `action` on the identity at `handle`
 * (`identity` is null when no such identity exists).
 *
 * - Admin key or Console: identities of its own organization; anything else is a
 *   404, so other organizations' identities are never revealed.
 * - Agent key: its own identity. An unclaimed identity's key may only read itself
 *   (CONTRACT §3), whatever it addresses → 403 `identity_unclaimed`. Another
 *   identity of the same organization is a 403 `identity_not_own` (SEED-SPEC §7:
 *   "key that may not read this identity"; the organization directory already
 *   shows it exists); any other identity is a 404.
 */
export function checkIdentityAccess(principal: Principal, handle: string, identity: IdentityOwnership | null, action: IdentityAction): void {
  if (principal.kind !== 'agent') {
    if (!identity || identity.organizationId !== principal.organizationId) throw identityNotFound();
    return;
  }
  const own = principal.identity.handle === handle;
  if (!principal.identity.claimed && !(own && action === 'read')) throw identityUnclaimed();
  if (own && identity) return;
  if (identity && identity.organizationId !== null && identity.organizationId === principal.organizationId) {
    throw forbidden('identity_not_own', 'An agent-scoped key may act only on its own identity.');
  }
  throw identityNotFound();
}

/**
 * Throws unless `principal` (already allowed to change settings of `identity`) may
 * change every one of `fields`. The request is refused as a whole: no partial update.
 */
export function checkSettingsChange(principal: Principal, identity: IdentityOwnership, fields: SettingField[], enabling: boolean): void {
  if (principal.kind === 'agent') {
    const refused = fields.filter((field) => !OWN_KEY_MAY_CHANGE[field]);
    if (refused.length > 0) {
      throw forbidden(
        'setting_not_permitted',
        `An identity's own key cannot change ${refused.join(' or ')}; use an admin-scoped key or the Console.`,
      );
    }
  }
  // SEED-SPEC §5 rule 2: an unclaimed identity cannot enable its receiver.
  if (enabling && !identity.claimed) throw identityUnclaimed();
}
