import type { AgentKeyPrincipal, Principal } from '../auth/principal';
import type { AppError } from '../common/app-error';
import { checkIdentityAccess, checkSettingsChange, type IdentityAction, type SettingField } from './identity-access';

const ACME = 'org-acme';
const OTHER = 'org-other';
const billing = { id: 'id-billing', handle: 'acme-billing', organizationId: ACME, claimed: true };
const sibling = { id: 'id-sibling', handle: 'acme-sales', organizationId: ACME, claimed: true };
const foreign = { id: 'id-foreign', handle: 'other-bot', organizationId: OTHER, claimed: true };
const orphan = { id: 'id-orphan', handle: 'new-bot', organizationId: null, claimed: false };

const agentOf = (identity: typeof billing | typeof orphan): AgentKeyPrincipal => ({
  kind: 'agent', id: 'key', organizationId: identity.organizationId,
  identity: { id: identity.id, handle: identity.handle, claimed: identity.claimed, enabled: false },
});
const admin = (organizationId: string): Principal => ({ kind: 'admin', id: 'key', organizationId });
const consoleUser = (organizationId: string): Principal => ({ kind: 'console', id: 'user', sessionId: 's', organizationId, viaCookie: false });

/** The outcome as `status code`, or 'ok'. */
function outcome(work: () => void): string {
  try {
    work();
    return 'ok';
  } catch (error) {
    return `${(error as AppError).status} ${(error as AppError).code}`;
  }
}

const ACTIONS: IdentityAction[] = ['read', 'readSettings', 'editCard', 'changeSettings', 'delete'];

describe('checkIdentityAccess', () => {
  it.each(ACTIONS)('%s: admin key and Console of the organization → ok; of another organization → 404', (action) => {
    for (const principal of [admin(ACME), consoleUser(ACME)]) {
      expect(outcome(() => checkIdentityAccess(principal, billing.handle, billing, action))).toBe('ok');
    }
    for (const principal of [admin(OTHER), consoleUser(OTHER)]) {
      expect(outcome(() => checkIdentityAccess(principal, billing.handle, billing, action))).toBe('404 identity_not_found');
    }
  });

  it('an admin key or Console never reaches an unclaimed identity (it has no organization)', () => {
    expect(outcome(() => checkIdentityAccess(admin(ACME), orphan.handle, orphan, 'read'))).toBe('404 identity_not_found');
  });

  it('a missing identity is a 404 for everyone who may address it', () => {
    for (const principal of [admin(ACME), consoleUser(ACME), agentOf(billing)]) {
      expect(outcome(() => checkIdentityAccess(principal, 'nobody', null, 'read'))).toBe('404 identity_not_found');
    }
  });

  it.each(ACTIONS)('%s: the own key of a claimed identity → ok', (action) => {
    expect(outcome(() => checkIdentityAccess(agentOf(billing), billing.handle, billing, action))).toBe('ok');
  });

  it.each(ACTIONS)('%s: a sibling\'s key → 403 identity_not_own; another organization\'s key → 404', (action) => {
    expect(outcome(() => checkIdentityAccess(agentOf(sibling), billing.handle, billing, action))).toBe('403 identity_not_own');
    expect(outcome(() => checkIdentityAccess(agentOf(foreign), billing.handle, billing, action))).toBe('404 identity_not_found');
  });

  it('an unclaimed identity\'s key reads itself and nothing else, without learning whether others exist', () => {
    const key = agentOf(orphan);
    expect(outcome(() => checkIdentityAccess(key, orphan.handle, orphan, 'read'))).toBe('ok');
    for (const action of ACTIONS.filter((a) => a !== 'read')) {
      expect(outcome(() => checkIdentityAccess(key, orphan.handle, orphan, action))).toBe('403 identity_unclaimed');
    }
    for (const action of ACTIONS) {
      expect(outcome(() => checkIdentityAccess(key, billing.handle, billing, action))).toBe('403 identity_unclaimed');
      expect(outcome(() => checkIdentityAccess(key, 'nobody', null, action))).toBe('403 identity_unclaimed');
    }
  });
});

describe('checkSettingsChange (CONTRACT §3 settings table)', () => {
  const table: Array<[SettingField, string]> = [
    ['enabled', 'ok'],
    ['allow_public_egress', 'ok'],
    ['publicly_discoverable', '403 setting_not_permitted'],
    ['filter_mode', '403 setting_not_permitted'],
  ];

  it.each(table)('%s: own key → %s; admin key and Console → ok', (field, ownKey) => {
    expect(outcome(() => checkSettingsChange(agentOf(billing), billing, [field], false))).toBe(ownKey);
    expect(outcome(() => checkSettingsChange(admin(ACME), billing, [field], false))).toBe('ok');
    expect(outcome(() => checkSettingsChange(consoleUser(ACME), billing, [field], false))).toBe('ok');
  });

  it('refuses the whole change when one field is not permitted', () => {
    expect(outcome(() => checkSettingsChange(agentOf(billing), billing, ['enabled', 'filter_mode'], true))).toBe('403 setting_not_permitted');
  });

  it('an unclaimed identity cannot be enabled by anyone', () => {
    for (const principal of [agentOf(orphan), admin(ACME), consoleUser(ACME)]) {
      expect(outcome(() => checkSettingsChange(principal, orphan, ['enabled'], true))).toBe('403 identity_unclaimed');
    }
    expect(outcome(() => checkSettingsChange(admin(ACME), orphan, ['enabled'], false))).toBe('ok');
  });
});
