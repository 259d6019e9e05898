import type { AppError } from '../common/app-error';
import {
  ACCESS_RULES,
  canAccess,
  identityParty,
  notVisible,
  requireAccess,
  requireGrant,
  requireRow,
  requireSettingsChange,
  eventScope,
  sideOf,
  visibleCondition,
  type Permission,
  type Resource,
  type SettingField,
} from './access';
import type { AgentKeyPrincipal, Principal } from '../common/principal';
import { sql } from '../database/sql';

const ACME = 'org-acme';
const OTHER = 'org-other';
const billing = { id: 'id-billing', handle: 'acme-billing', organizationId: ACME, claimed: true };
const sibling = { id: 'id-sibling', handle: 'acme-sales', organizationId: ACME, claimed: true };
const foreign = { id: 'id-foreign', handle: 'other-bot', organizationId: OTHER, claimed: true };
const orphan = { id: 'id-orphan', handle: 'new-bot', organizationId: null, claimed: false };
type Ident = typeof billing | typeof orphan;

const agentOf = (identity: Ident): AgentKeyPrincipal => ({
  kind: 'agent',
  id: 'key',
  organizationId: identity.organizationId,
  identity: { id: identity.id, handle: identity.handle, claimed: identity.claimed, enabled: false },
});
const admin = (organizationId: string): Principal => ({ kind: 'admin', id: 'key', organizationId });
const consoleUser = (organizationId: string): Principal => ({
  kind: 'console',
  id: 'user',
  sessionId: 's',
  organizationId,
  viaCookie: false,
});

/** The outcome as `status code`, or 'ok'. */
function outcome(work: () => void): string {
  try {
    work();
    return 'ok';
  } catch (error) {
    return `${(error as AppError).status} ${(error as AppError).code}`;
  }
}

const owned = (identity: Ident): Resource => identityParty(identity)!;
/** An organization-wide row (a key, an organization-wide webhook). */
const orgWide = (organizationId: string): Resource => ({ owner: { organizationId, identityId: null } });
const task = (requester: Ident, worker: Ident): Resource => ({
  requester: { organizationId: requester.organizationId, identityId: requester.id },
  worker: { organizationId: worker.organizationId, identityId: worker.id },
});

/**
 * The ownership cases every permission is tried against, and the principals. The
 * expected outcome of each (principal, permission, case) is written out below as
 * docs/api.md's tables say it.
 */
type Case = 'own' | 'sibling' | 'foreign' | 'orphan' | 'orgWide' | 'foreignOrgWide' | 'missing';
type Who = 'admin' | 'console' | 'foreignAdmin' | 'agent' | 'siblingAgent' | 'foreignAgent' | 'unclaimedAgent';

const PRINCIPALS: Record<Who, Principal> = {
  admin: admin(ACME),
  console: consoleUser(ACME),
  foreignAdmin: admin(OTHER),
  agent: agentOf(billing),
  siblingAgent: agentOf(sibling),
  foreignAgent: agentOf(foreign),
  unclaimedAgent: agentOf(orphan),
};

/** Single-owner resources: `own` is billing's row. */
const OWNER_CASES: Record<Case, Resource | null> = {
  own: owned(billing),
  sibling: owned(sibling),
  foreign: owned(foreign),
  orphan: owned(orphan),
  orgWide: orgWide(ACME),
  foreignOrgWide: orgWide(OTHER),
  missing: null,
};

const CASES = Object.keys(OWNER_CASES) as Case[];
const WHOS = Object.keys(PRINCIPALS) as Who[];

/** For each principal, its outcome per case, as a compact row. */
type Row = Partial<Record<Case, string>> & { else: string };
type Table = Record<Who, Row>;

const NF = (code: string) => `404 ${code}`;
const FB = (code: string) => `403 ${code}`;

/** The organization (admin key, Console) reaches its rows; another organization sees 404s. */
function organizationRows(hidden: string): Pick<Table, 'admin' | 'console' | 'foreignAdmin'> {
  const mine = { own: 'ok', sibling: 'ok', orgWide: 'ok', else: NF(hidden) };
  return { admin: mine, console: mine, foreignAdmin: { foreign: 'ok', foreignOrgWide: 'ok', else: NF(hidden) } };
}
/** An agent key reaches its own identity's rows only; an unclaimed one nothing. */
function ownRows(
  hidden: string,
  outside = NF(hidden),
): Pick<Table, 'agent' | 'siblingAgent' | 'foreignAgent' | 'unclaimedAgent'> {
  return {
    agent: { own: 'ok', else: outside },
    siblingAgent: { sibling: 'ok', else: outside },
    foreignAgent: { foreign: 'ok', else: outside },
    unclaimedAgent: { else: FB('identity_unclaimed') },
  };
}
function refusedAgents(code: string): Pick<Table, 'agent' | 'siblingAgent' | 'foreignAgent' | 'unclaimedAgent'> {
  return {
    agent: { else: FB(code) },
    siblingAgent: { else: FB(code) },
    foreignAgent: { else: FB(code) },
    unclaimedAgent: { else: FB(code) },
  };
}

const identityTable = (extra: Partial<Table> = {}): Table => ({
  ...organizationRows('identity_not_found'),
  agent: {
    own: 'ok',
    sibling: FB('identity_not_own'),
    orgWide: FB('identity_not_own'),
    else: NF('identity_not_found'),
  },
  siblingAgent: {
    sibling: 'ok',
    own: FB('identity_not_own'),
    orgWide: FB('identity_not_own'),
    else: NF('identity_not_found'),
  },
  foreignAgent: { foreign: 'ok', foreignOrgWide: FB('identity_not_own'), else: NF('identity_not_found') },
  unclaimedAgent: { else: FB('identity_unclaimed') },
  ...extra,
});

/** docs/api.md §2, §3, §6, §8 for single-owner resources. */
const OWNER_EXPECTED: Partial<Record<Permission, Table>> = {
  'identity.read': identityTable({ unclaimedAgent: { orphan: 'ok', else: FB('identity_unclaimed') } }),
  'identity.readSettings': identityTable(),
  'usage.read': identityTable(),
  'identity.editCard': identityTable(),
  'identity.changeSettings': identityTable(),
  'identity.delete': identityTable(refusedAgents('agent_key_not_allowed')),
  'key.bind': { ...organizationRows('identity_not_found'), ...refusedAgents('agent_key_not_allowed') },
  'key.read': { ...organizationRows('api_key_not_found'), ...refusedAgents('agent_key_not_allowed') },
  'key.edit': {
    ...organizationRows('api_key_not_found'),
    ...refusedAgents('agent_key_not_allowed'),
    admin: { else: FB('admin_key_not_allowed') },
    foreignAdmin: { else: FB('admin_key_not_allowed') },
  },
  'key.revoke': {
    ...organizationRows('api_key_not_found'),
    ...refusedAgents('agent_key_not_allowed'),
    admin: { else: FB('admin_key_not_allowed') },
    foreignAdmin: { else: FB('admin_key_not_allowed') },
  },
  'rule.read': { ...organizationRows('contact_rule_not_found'), ...ownRows('contact_rule_not_found') },
  'rule.create': { ...organizationRows('identity_not_found'), ...refusedAgents('agent_key_not_allowed') },
  'rule.write': { ...organizationRows('contact_rule_not_found'), ...refusedAgents('agent_key_not_allowed') },
  'decision.read': { ...organizationRows('identity_not_found'), ...refusedAgents('agent_key_not_allowed') },
  'approval.read': { ...organizationRows('approval_not_found'), ...refusedAgents('agent_key_not_allowed') },
  'approval.decide': { ...organizationRows('approval_not_found'), ...refusedAgents('agent_key_not_allowed') },
  'webhook.read': { ...organizationRows('webhook_not_found'), ...ownRows('webhook_not_found') },
  'webhook.write': { ...organizationRows('webhook_not_found'), ...ownRows('webhook_not_found') },
  'delivery.read': { ...organizationRows('webhook_not_found'), ...ownRows('webhook_not_found') },
  'webhook.subscribe': {
    ...organizationRows('identity_not_found'),
    ...ownRows('identity_not_found', FB('own_identity_only')),
  },
};

describe('requireAccess: single-owner resources (every principal × permission × ownership case)', () => {
  for (const [permission, table] of Object.entries(OWNER_EXPECTED) as Array<[Permission, Table]>) {
    describe(permission, () => {
      for (const who of WHOS) {
        it.each(CASES)(`${who} on %s`, (c) => {
          const expected = table[who][c] ?? table[who].else;
          expect(outcome(() => requireAccess(PRINCIPALS[who], permission, OWNER_CASES[c], 'ref'))).toBe(expected);
          expect(canAccess(PRINCIPALS[who], permission, OWNER_CASES[c])).toBe(expected === 'ok');
        });
      }
    });
  }
});

describe('requireAccess: ledger (docs/api.md §7)', () => {
  const TASKS: Record<string, Resource | null> = {
    'billing→sibling': task(billing, sibling),
    'sibling→billing': task(sibling, billing),
    'foreign→billing': task(foreign, billing),
    'billing→foreign': task(billing, foreign),
    'foreign→foreign': task(foreign, foreign),
    missing: null,
  };
  /** principal → case → [task.read, task.reply]; context.read is task.read with its own 404. */
  const EXPECTED: Record<Who, Record<string, [string, string]>> = {
    admin: {
      'billing→sibling': ['ok', 'ok'],
      'sibling→billing': ['ok', 'ok'],
      'foreign→billing': ['ok', 'ok'],
      'billing→foreign': ['ok', FB('not_task_worker')],
      'foreign→foreign': [NF('task_not_found'), NF('task_not_found')],
      missing: [NF('task_not_found'), NF('task_not_found')],
    },
    console: {} as never,
    foreignAdmin: {
      'billing→sibling': [NF('task_not_found'), NF('task_not_found')],
      'sibling→billing': [NF('task_not_found'), NF('task_not_found')],
      'foreign→billing': ['ok', FB('not_task_worker')],
      'billing→foreign': ['ok', 'ok'],
      'foreign→foreign': ['ok', 'ok'],
      missing: [NF('task_not_found'), NF('task_not_found')],
    },
    agent: {
      'billing→sibling': ['ok', FB('not_task_worker')],
      'sibling→billing': ['ok', 'ok'],
      'foreign→billing': ['ok', 'ok'],
      'billing→foreign': ['ok', FB('not_task_worker')],
      'foreign→foreign': [NF('task_not_found'), NF('task_not_found')],
      missing: [NF('task_not_found'), NF('task_not_found')],
    },
    siblingAgent: {
      'billing→sibling': ['ok', 'ok'],
      'sibling→billing': ['ok', FB('not_task_worker')],
      'foreign→billing': [NF('task_not_found'), NF('task_not_found')],
      'billing→foreign': [NF('task_not_found'), NF('task_not_found')],
      'foreign→foreign': [NF('task_not_found'), NF('task_not_found')],
      missing: [NF('task_not_found'), NF('task_not_found')],
    },
    foreignAgent: {
      'billing→sibling': [NF('task_not_found'), NF('task_not_found')],
      'sibling→billing': [NF('task_not_found'), NF('task_not_found')],
      'foreign→billing': ['ok', FB('not_task_worker')],
      'billing→foreign': ['ok', 'ok'],
      'foreign→foreign': ['ok', 'ok'],
      missing: [NF('task_not_found'), NF('task_not_found')],
    },
    unclaimedAgent: Object.fromEntries(
      Object.keys(TASKS).map((k) => [k, [FB('identity_unclaimed'), FB('identity_unclaimed')]]),
    ),
  };
  EXPECTED.console = EXPECTED.admin;

  for (const who of WHOS) {
    it.each(Object.keys(TASKS))(`${who} on a task %s`, (c) => {
      const [read, reply] = EXPECTED[who][c];
      expect(outcome(() => requireAccess(PRINCIPALS[who], 'task.read', TASKS[c]))).toBe(read);
      expect(outcome(() => requireAccess(PRINCIPALS[who], 'task.reply', TASKS[c]))).toBe(reply);
      // A forwarded task's upstream ids: exactly where the caller may reply (the worker's side); else not found.
      const upstream = reply === 'ok' || reply === FB('identity_unclaimed') ? reply : NF('task_not_found');
      expect(outcome(() => requireAccess(PRINCIPALS[who], 'task.readUpstream', TASKS[c]))).toBe(upstream);
      expect(outcome(() => requireAccess(PRINCIPALS[who], 'context.read', TASKS[c]))).toBe(
        read.replace('task_not_found', 'context_not_found'),
      );
    });
  }
});

describe("requireAccess: admission check (at least one side is the organization's)", () => {
  const pair = (requester: Ident | null, worker: Ident | null): Resource => ({
    requester: identityParty(requester)?.owner ?? null,
    worker: identityParty(worker)?.owner ?? null,
  });
  const PAIRS: Record<string, Resource> = {
    'own→foreign': pair(billing, foreign),
    'foreign→own': pair(foreign, billing),
    'own→unknown': pair(billing, null),
    'unknown→own': pair(null, billing),
    'foreign→unknown': pair(foreign, null),
    'unknown→unknown': pair(null, null),
    'foreign→orphan': pair(foreign, orphan),
  };
  const ALLOWED = new Set(['own→foreign', 'foreign→own', 'own→unknown', 'unknown→own']);
  for (const who of ['admin', 'console'] as Who[]) {
    it.each(Object.keys(PAIRS))(`${who}: %s`, (c) => {
      expect(outcome(() => requireAccess(PRINCIPALS[who], 'admission.check', PAIRS[c]))).toBe(
        ALLOWED.has(c) ? 'ok' : NF('identity_not_found'),
      );
    });
  }
  it('is refused to agent keys', () => {
    expect(outcome(() => requireAccess(PRINCIPALS.agent, 'admission.check', PAIRS['own→foreign']))).toBe(
      FB('agent_key_not_allowed'),
    );
  });
});

describe('requireGrant: who may mint (docs/api.md §2)', () => {
  const MINT: Record<Who, [string, string]> = {
    admin: ['ok', FB('admin_mint_forbidden')],
    foreignAdmin: ['ok', FB('admin_mint_forbidden')],
    console: ['ok', 'ok'],
    agent: [FB('agent_key_not_allowed'), FB('agent_key_not_allowed')],
    siblingAgent: [FB('agent_key_not_allowed'), FB('agent_key_not_allowed')],
    foreignAgent: [FB('agent_key_not_allowed'), FB('agent_key_not_allowed')],
    unclaimedAgent: [FB('agent_key_not_allowed'), FB('agent_key_not_allowed')],
  };
  it.each(WHOS)('%s', (who) => {
    expect(outcome(() => requireGrant(PRINCIPALS[who], 'key.mintAgent'))).toBe(MINT[who][0]);
    expect(outcome(() => requireGrant(PRINCIPALS[who], 'key.mintAdmin'))).toBe(MINT[who][1]);
  });
});

describe('the table', () => {
  it('covers every permission in this spec', () => {
    const covered = new Set<string>([
      ...Object.keys(OWNER_EXPECTED),
      'task.read',
      'task.reply',
      'task.readUpstream',
      'context.read',
      'admission.check',
      'key.mintAgent',
      'key.mintAdmin',
    ]);
    expect(Object.keys(ACCESS_RULES).filter((p) => !covered.has(p))).toEqual([]);
  });

  it("keeps today's messages for the 404s that name what the caller asked for", () => {
    expect(notVisible('rule.create', 'acme-x').detail).toBe("No identity with handle 'acme-x' in your organization.");
    expect(notVisible('identity.read').detail).toBe('No identity with that handle is visible to you.');
    expect(notVisible('key.read').detail).toBe('No API key with that id in your organization.');
    expect(notVisible('webhook.read').detail).toBe('No webhook with that id.');
    expect(notVisible('rule.write').detail).toBe('No contact rule with that id in your organization.');
  });

  it('requireRow returns the row once allowed, and refuses a missing one', () => {
    expect(requireRow(PRINCIPALS.admin, 'identity.read', billing, identityParty)).toBe(billing);
    expect(outcome(() => requireRow(PRINCIPALS.admin, 'identity.read', null, identityParty))).toBe(
      NF('identity_not_found'),
    );
  });
});

describe('requireSettingsChange (docs/api.md §3 settings table)', () => {
  it.each<[SettingField, string]>([
    ['enabled', 'ok'],
    ['allow_public_egress', 'ok'],
    ['publicly_discoverable', '403 setting_not_permitted'],
    ['filter_mode', '403 setting_not_permitted'],
    ['require_skill', '403 setting_not_permitted'],
  ])('%s: own key → %s; admin key and Console → ok', (field, ownKey) => {
    expect(outcome(() => requireSettingsChange(agentOf(billing), billing, [field], false))).toBe(ownKey);
    expect(outcome(() => requireSettingsChange(admin(ACME), billing, [field], false))).toBe('ok');
    expect(outcome(() => requireSettingsChange(consoleUser(ACME), billing, [field], false))).toBe('ok');
  });

  it('refuses the whole request when one field is not permitted', () => {
    expect(outcome(() => requireSettingsChange(agentOf(billing), billing, ['enabled', 'filter_mode'], true))).toBe(
      '403 setting_not_permitted',
    );
  });

  it('never enables an unclaimed identity, whoever asks', () => {
    for (const principal of [admin(ACME), consoleUser(ACME)]) {
      expect(outcome(() => requireSettingsChange(principal, orphan, ['enabled'], true))).toBe('403 identity_unclaimed');
    }
    expect(outcome(() => requireSettingsChange(admin(ACME), orphan, ['enabled'], false))).toBe('ok');
  });
});

describe('visibleCondition: the SQL side of task.read / context.read', () => {
  it('an agent key stands on its identity columns, an organization on the organization columns', () => {
    expect(sideOf(PRINCIPALS.agent)).toEqual({ kind: 'identity', identityId: billing.id });
    expect(sideOf(PRINCIPALS.console)).toEqual({ kind: 'organization', organizationId: ACME });
    const condition = visibleCondition('t', sideOf(PRINCIPALS.agent), {}, sql.raw('NOT t.held'));
    expect(condition.text).toBe('((t.requester_identity_id = $1) OR (t.worker_identity_id = $2 AND NOT t.held))');
    expect(condition.values).toEqual([billing.id, billing.id]);
  });

  it('narrows by role, identity and peer (an id in any case, or a handle)', () => {
    const id = 'AAAAAAAA-0000-4000-8000-000000000001';
    const condition = visibleCondition(
      'c',
      sideOf(PRINCIPALS.admin),
      {
        role: 'worker',
        identity: 'acme-billing',
        peer: id,
      },
      sql.raw('c.unheld'),
    );
    expect(condition.text).toBe(
      '(c.worker_organization_id = $1 AND c.worker_handle = $2 AND c.requester_identity_id = $3::uuid AND c.unheld)',
    );
    expect(condition.values).toEqual([ACME, 'acme-billing', id.toLowerCase()]);
  });
});

describe('eventScope: the SQL side of webhook.read and the event stream', () => {
  it('is the organization, narrowed to the identity for an agent key', () => {
    expect(eventScope(PRINCIPALS.admin)).toEqual({ organizationId: ACME, identityId: null });
    expect(eventScope(PRINCIPALS.console)).toEqual({ organizationId: ACME, identityId: null });
    expect(eventScope(PRINCIPALS.agent)).toEqual({ organizationId: ACME, identityId: billing.id });
  });
});
