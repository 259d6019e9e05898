import { forbidden, notFound, type AppError } from '../common/app-error';
import { isUuid } from '../common/parse-id.pipe';
import { sql, type Sql } from '../database/sql';
import type { Principal } from '../common/principal';
import { CREDENTIAL_LABELS } from './surfaces';

/**
 * "May this principal touch this resource", decided in one place (docs/api.md §1–§3,
 * §6–§8). The route's surface has already let the credential
 * kind through (src/auth/surfaces.ts); this file decides, for one row, whether the
 * caller reaches it (allow), must not learn it exists (404: never another
 * organization's resources), or sees it but may not do this (403).
 *
 * Standing: an admin key or a Console user stands on every party of its own
 * organization; an agent key stands on its own identity only. A resource names its
 * parties (its owner, or a task's requester and worker) by organization and identity.
 */
export type Permission =
  // docs/api.md §3 Identities
  | 'identity.read'
  | 'identity.readSettings'
  | 'identity.editCard'
  | 'identity.changeSettings'
  | 'identity.delete'
  // docs/api.md §2 API keys (who may mint)
  | 'key.mintAgent'
  | 'key.mintAdmin'
  | 'key.bind'
  | 'key.read'
  | 'key.edit'
  | 'key.revoke'
  // docs/api.md §7 The ledger
  | 'task.read'
  | 'task.reply'
  | 'task.readUpstream'
  | 'context.read'
  // docs/api.md §6 Admission
  | 'rule.read'
  | 'rule.create'
  | 'rule.write'
  | 'admission.check'
  | 'decision.read'
  // docs/api.md §16 Approvals
  | 'approval.read'
  | 'approval.decide'
  // docs/api.md §18 Usage
  | 'usage.read'
  // docs/api.md §8 Webhooks (who may: docs/walkthrough.md, "Subscribing")
  | 'webhook.read'
  | 'webhook.write'
  | 'webhook.subscribe'
  | 'delivery.read';

/** One side of a resource: the organization holding it (null: unclaimed) and the identity, if one. */
export interface Party {
  organizationId: string | null;
  identityId: string | null;
}

export type Role = 'owner' | 'requester' | 'worker';

/**
 * The ownership facts of a row. Most rows have an owner; tasks and contexts a
 * requester and a worker; an admission check names two identities, either unknown.
 */
export type Resource = Partial<Record<Role, Party | null>>;

/** How a principal kind holds a permission: through its organization, through its own identity, or not at all. */
type Standing = 'organization' | 'own';
type Grant = Standing | ((principal: Principal) => AppError);

interface AccessRule {
  admin: Grant;
  console: Grant;
  agent: Grant;
  /** The parties through which a grant reaches the resource. */
  via: Role[];
  /** The resource is not visible to the caller (or does not exist). `ref` is what the caller named. */
  hidden: (ref?: string) => AppError;
  /** Visible, but acting needs standing on this party; otherwise its 403. */
  acts?: { as: Role; refuse: () => AppError };
  /** An unclaimed identity's key may do this to its own identity (docs/api.md §3); elsewhere it gets 403. */
  unclaimedKey?: boolean;
  /** An agent key that does not stand on the resource: this 403 instead of the 404 (`sameOrganization`: only when the resource is of its organization). */
  agentOutside?: { refuse: () => AppError; sameOrganization: boolean };
}

export const identityNotFound = () => notFound('identity_not_found', 'No identity with that handle is visible to you.');
export const identityUnclaimed = () =>
  forbidden('identity_unclaimed', 'The identity is not claimed yet; claim it from the Console first.');
const identityNotOwn = () => forbidden('identity_not_own', 'An agent-scoped key may act only on its own identity.');
const taskNotFound = () => notFound('task_not_found', 'No task with that id is visible to you.');
const contextNotFound = () => notFound('context_not_found', 'No context with that id is visible to you.');
const notTaskWorker = () =>
  forbidden('not_task_worker', "Only the task's worker (its own key, or its organization) may reply.");
const keyNotFound = () => notFound('api_key_not_found', 'No API key with that id in your organization.');
const ruleNotFound = () => notFound('contact_rule_not_found', 'No contact rule with that id in your organization.');
const webhookNotFound = () => notFound('webhook_not_found', 'No webhook with that id.');
const approvalNotFound = () =>
  notFound('approval_not_found', 'No approval request with that id for your organization to decide.');

const NOT_ALLOWED_CODE = {
  admin: 'admin_key_not_allowed',
  agent: 'agent_key_not_allowed',
  console: 'console_session_not_allowed',
} as const;
/** The 403 a credential kind gets where it holds no grant (the surface normally refuses it first, with the same code). */
const notAccepted = (principal: Principal) =>
  forbidden(NOT_ALLOWED_CODE[principal.kind], `This endpoint does not accept a ${CREDENTIAL_LABELS[principal.kind]}.`);

const OWNER: Role[] = ['owner'];
const PARTICIPANTS: Role[] = ['requester', 'worker'];

/** An identity: its organization's admin keys and Console users; its own key (another identity of the same organization: 403). */
const IDENTITY: AccessRule = {
  admin: 'organization',
  console: 'organization',
  agent: 'own',
  via: OWNER,
  hidden: identityNotFound,
  agentOutside: { refuse: identityNotOwn, sameOrganization: true },
};
/** Organization administration: admin keys and Console users of the organization. */
const ORGANIZATION = { admin: 'organization', console: 'organization', agent: notAccepted, via: OWNER } as const;
/** Console only (a person's act; API keys → 403). */
const CONSOLE_ONLY = { admin: notAccepted, console: 'organization', agent: notAccepted, via: OWNER } as const;
/** Ledger reads: the organization of either participant, or a claimed agent key of either participant. */
const LEDGER = { admin: 'organization', console: 'organization', agent: 'own', via: PARTICIPANTS } as const;
/** Webhooks: organization-wide or per identity; an agent key only its own identity's. */
const WEBHOOK = {
  admin: 'organization',
  console: 'organization',
  agent: 'own',
  via: OWNER,
  hidden: webhookNotFound,
} as const;

/** The table: the "Who" columns of docs/api.md, per permission. */
export const ACCESS_RULES: Readonly<Record<Permission, AccessRule>> = {
  'identity.read': { ...IDENTITY, unclaimedKey: true },
  'identity.readSettings': IDENTITY,
  'identity.editCard': IDENTITY,
  'identity.changeSettings': IDENTITY,
  'identity.delete': { ...IDENTITY, agent: notAccepted },

  'key.mintAgent': {
    ...ORGANIZATION,
    hidden: keyNotFound,
    agent: () => forbidden('agent_key_not_allowed', 'Agent-scoped keys cannot mint keys.'),
  },
  'key.mintAdmin': {
    ...CONSOLE_ONLY,
    hidden: keyNotFound,
    admin: () => forbidden('admin_mint_forbidden', 'Admin-scoped keys can only be minted from a Console session.'),
    agent: () => forbidden('agent_key_not_allowed', 'Agent-scoped keys cannot mint keys.'),
  },
  /** The identity a new agent key is bound to. */
  'key.bind': {
    ...ORGANIZATION,
    hidden: () => notFound('identity_not_found', 'No identity with that id in your organization.'),
  },
  'key.read': { ...ORGANIZATION, hidden: keyNotFound },
  'key.edit': { ...CONSOLE_ONLY, hidden: keyNotFound },
  'key.revoke': { ...CONSOLE_ONLY, hidden: keyNotFound },

  'task.read': { ...LEDGER, hidden: taskNotFound },
  'task.reply': { ...LEDGER, hidden: taskNotFound, acts: { as: 'worker', refuse: notTaskWorker } },
  /** A forwarded task's upstream ids: the worker's side only (its organization, its own key), never the requester's. */
  'task.readUpstream': { ...LEDGER, via: ['worker'], hidden: taskNotFound },
  'context.read': { ...LEDGER, hidden: contextNotFound },

  /** Listing an identity's rules (an identity the caller cannot see matches nothing). */
  'rule.read': { ...ORGANIZATION, agent: 'own', hidden: ruleNotFound },
  /** Creating a rule for an owner identity. */
  'rule.create': {
    ...ORGANIZATION,
    hidden: (handle) => notFound('identity_not_found', `No identity with handle '${handle}' in your organization.`),
  },
  'rule.write': { ...ORGANIZATION, hidden: ruleNotFound },
  /** At least one of the two identities is the caller's organization's. */
  'admission.check': {
    ...ORGANIZATION,
    via: PARTICIPANTS,
    hidden: () =>
      notFound('identity_not_found', 'Neither the requester nor the worker is an identity of your organization.'),
  },
  /** Decisions about one identity of the organization. */
  'decision.read': { ...ORGANIZATION, hidden: identityNotFound },

  /** An approval request is its deciding organization's (its owner: the asking identity); the other side never sees it. */
  'approval.read': { ...ORGANIZATION, hidden: approvalNotFound },
  'approval.decide': { ...ORGANIZATION, hidden: approvalNotFound },

  /** Usage rollups of an identity: its organization's admin keys and Console users, its own key. */
  'usage.read': IDENTITY,

  'webhook.read': WEBHOOK,
  'webhook.write': WEBHOOK,
  /** The identity a new webhook is scoped to. */
  'webhook.subscribe': {
    ...WEBHOOK,
    hidden: () => notFound('identity_not_found', 'No identity with that handle or id in your organization.'),
    agentOutside: {
      refuse: () =>
        forbidden('own_identity_only', "An agent-scoped key can only subscribe to its own identity's events."),
      sameOrganization: false,
    },
  },
  /** Deliveries are seen through their webhook. */
  'delivery.read': WEBHOOK,
};

/** Whether `principal` stands on `party` under `grant`. */
function standsOn(principal: Principal, grant: Grant, party: Party | null | undefined): boolean {
  if (!party || typeof grant === 'function') {
    return false;
  }
  if (grant === 'own') {
    return principal.kind === 'agent' && party.identityId !== null && party.identityId === principal.identity.id;
  }
  return party.organizationId !== null && party.organizationId === principal.organizationId;
}

/**
 * Throws unless `principal` holds `permission` at all, whatever the row: for acts
 * that concern no existing row yet (minting a key).
 */
export function requireGrant(principal: Principal, permission: Permission): Standing {
  const rule = ACCESS_RULES[permission];
  const grant = rule[principal.kind];
  if (typeof grant === 'function') {
    throw grant(principal);
  }
  if (principal.kind === 'agent' && !principal.identity.claimed && !rule.unclaimedKey) {
    throw identityUnclaimed();
  }
  return grant;
}

/**
 * Throws unless `principal` may do `permission` to `resource` (null or undefined:
 * no such row). `ref` is what the caller named, for messages.
 */
export function requireAccess(
  principal: Principal,
  permission: Permission,
  resource: Resource | null | undefined,
  ref?: string,
): void {
  const rule = ACCESS_RULES[permission];
  const grant = requireGrant(principal, permission);
  const unclaimed = principal.kind === 'agent' && !principal.identity.claimed;
  const visible = !!resource && rule.via.some((role) => standsOn(principal, grant, resource[role]));
  if (!visible) {
    if (unclaimed) {
      throw identityUnclaimed();
    }
    if (principal.kind === 'agent' && rule.agentOutside) {
      const sameOrganization =
        !!resource && rule.via.some((role) => standsOn(principal, 'organization', resource[role]));
      if (!rule.agentOutside.sameOrganization || sameOrganization) {
        throw rule.agentOutside.refuse();
      }
    }
    throw rule.hidden(ref);
  }
  if (rule.acts && !standsOn(principal, grant, resource![rule.acts.as])) {
    throw rule.acts.refuse();
  }
}

/** `requireAccess` for one row that may be missing; returns the row once allowed. */
export function requireRow<T>(
  principal: Principal,
  permission: Permission,
  row: T | null | undefined,
  parties: (row: T) => Resource | null,
  ref?: string,
): T {
  requireAccess(principal, permission, row ? parties(row) : null, ref);
  return row!;
}

/** The 404 of a permission's resource, for a row a visibility condition (SQL) already left out. */
export function notVisible(permission: Permission, ref?: string): AppError {
  return ACCESS_RULES[permission].hidden(ref);
}

/** Whether `requireAccess` would allow (list filters: a row the caller may not touch matches nothing). */
export function canAccess(
  principal: Principal,
  permission: Permission,
  resource: Resource | null | undefined,
): boolean {
  try {
    requireAccess(principal, permission, resource);
    return true;
  } catch {
    return false;
  }
}

/** An identity row as a party: its organization and itself. */
export function partyOf(identity: { id: string; organizationId: string | null } | null | undefined): Party | null {
  return identity ? { organizationId: identity.organizationId, identityId: identity.id } : null;
}

/** An identity row as the owner of itself (null: no such identity). */
export function identityParty(
  identity: { id: string; organizationId: string | null } | null | undefined,
): Resource | null {
  return identity ? { owner: partyOf(identity) } : null;
}

// ---------------------------------------------------------------------------
// Identity settings (docs/api.md §3 "Settings field" table)

export type SettingField =
  | 'enabled'
  | 'allow_public_egress'
  | 'publicly_discoverable'
  | 'filter_mode'
  | 'require_skill'
  | 'daily_task_quota'
  | 'monthly_cost_budget';

/**
 * The own-key column: an admin key or Console user of the identity's organization
 * may change every field; the identity's own key only these (docs/api.md §1:
 * publicly_discoverable, filter_mode and require_skill need an admin-scoped key or a
 * same-organization Console user; so do the budgets, §18: an agent does not set its own).
 */
export const OWN_KEY_MAY_CHANGE: Readonly<Record<SettingField, boolean>> = {
  enabled: true,
  allow_public_egress: true,
  publicly_discoverable: false,
  filter_mode: false,
  require_skill: false,
  daily_task_quota: false,
  monthly_cost_budget: false,
};

/**
 * Throws unless `principal` (already allowed `identity.changeSettings`) may change
 * every one of `fields`. The request is refused as a whole: no partial update.
 */
export function requireSettingsChange(
  principal: Principal,
  identity: { claimed: boolean },
  fields: SettingField[],
  enabling: boolean,
): void {
  if (principal.kind === 'agent') {
    const refused = fields.filter((field) => !OWN_KEY_MAY_CHANGE[field]);
    if (refused.length > 0) {
      throw forbidden(
        'setting_not_permitted',
        `An identity's own key cannot change ${refused.join(' or ')}; use an admin-scoped key or the Console.`,
      );
    }
  }
  // docs/api.md §3: an unclaimed identity cannot enable its receiver.
  if (enabling && !identity.claimed) {
    throw identityUnclaimed();
  }
}

// ---------------------------------------------------------------------------
// The SQL side, for lists: the same standing as a WHERE condition.

/**
 * Which events and webhooks a list shows (docs/api.md §8, §14; `webhook.read`): the
 * organization's, and for an agent key only its own identity's. The surfaces admit
 * only claimed agent keys, whose organization is set.
 */
export function eventScope(principal: Principal): { organizationId: string; identityId: string | null } {
  return {
    organizationId: principal.organizationId!,
    identityId: principal.kind === 'agent' ? principal.identity.id : null,
  };
}

// docs/api.md §7: the ledger.

/** Where a principal stands in the ledger: its own identity (agent key) or its organization. */
export type LedgerSide = { kind: 'identity'; identityId: string } | { kind: 'organization'; organizationId: string };
export type LedgerRole = 'requester' | 'worker';

/** `task.read`'s standing as the columns a query compares: 'own' → the identity's, 'organization' → the organization's. */
export function sideOf(principal: Principal): LedgerSide {
  return principal.kind === 'agent' && ACCESS_RULES['task.read'].agent === 'own'
    ? { kind: 'identity', identityId: principal.identity.id }
    : { kind: 'organization', organizationId: principal.organizationId! };
}

export interface SideFilter {
  /** Only rows where the caller is the requester, or the worker. */
  role?: LedgerRole;
  /** Narrows the caller's side to one identity (handle or id). */
  identity?: string;
  /** The other side: one identity (handle or id). */
  peer?: string;
}

/**
 * The SQL condition for "`task.read` / `context.read` allows this row, and it matches
 * `filter`". Tasks and contexts share the participant columns (`alias` is the
 * table's alias in the query; trusted text, never a value from a request). `unheld`
 * is what the worker's side also needs of a row: the ledger keeps a held task (waiting
 * for approval, docs/api.md §16) from it, and a context that holds nothing else.
 */
export function visibleCondition(alias: string, side: LedgerSide, filter: SideFilter, unheld: Sql): Sql {
  const own = side.kind === 'identity' ? side.identityId : side.organizationId;
  const column = (role: LedgerRole, name: string) => sql.raw(`${alias}.${role}_${name}`);
  const mine = (role: LedgerRole) => [
    sql`${column(role, side.kind === 'identity' ? 'identity_id' : 'organization_id')} = ${own}`,
    ...(filter.identity === undefined ? [] : [identityMatch(filter.identity, column, role)]),
  ];
  const theirs = (role: LedgerRole) => (filter.peer === undefined ? [] : [identityMatch(filter.peer, column, role)]);
  const asRole = (role: LedgerRole) =>
    sql`(${sql.join([...mine(role), ...theirs(role === 'requester' ? 'worker' : 'requester'), ...unheldAs(role)], ' AND ')})`;
  const unheldAs = (role: LedgerRole) => (role === 'worker' ? [unheld] : []);
  return filter.role ? asRole(filter.role) : sql`(${asRole('requester')} OR ${asRole('worker')})`;
}

/** An identity named by id (any case) or by handle, on one role's columns. */
function identityMatch(value: string, column: (role: LedgerRole, name: string) => Sql, role: LedgerRole): Sql {
  return isUuid(value)
    ? sql`${column(role, 'identity_id')} = ${value.toLowerCase()}::uuid`
    : sql`${column(role, 'handle')} = ${value}`;
}
