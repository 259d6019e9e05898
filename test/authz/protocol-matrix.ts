/**
 * The protocol endpoint's cases (and docs/api.md §5's order of
 * checks) as data: who calls, which worker, what the two identities' settings and
 * contact rules say → the HTTP status and the `reason` of the JSON-RPC error body
 * (null: the call reaches its method, HTTP 200). The route's credential columns are
 * also in matrix.ts; these rows add the caller's and the worker's state, and
 * admission (docs/api.md §6).
 */
export interface Party {
  /** Organization: acme (the caller's) or globex (another one). */
  org: 'acme' | 'globex';
  enabled?: boolean;
  claimed?: boolean;
  deleted?: boolean;
  publiclyDiscoverable?: boolean;
  allowPublicEgress?: boolean;
  filterMode?: 'whitelist' | 'blacklist';
}

export interface RuleSpec {
  owner: 'requester' | 'worker';
  direction: 'inbound' | 'outbound' | 'both';
  action: 'allow' | 'block';
  /** The rule names the other identity, or its organization. */
  peer: 'identity' | 'organization';
}

export type Caller =
  | { kind: 'agent'; identity: Party }
  | { kind: 'none' | 'malformed' | 'revokedAgent' | 'expiredAgent' | 'admin' | 'console' };

export interface ProtocolCase {
  name: string;
  caller: Caller;
  /** The worker; `missing` when the handle names nobody. */
  worker: Party | 'missing';
  rules?: RuleSpec[];
  status: number;
  reason: string | null;
}

const caller = (identity: Partial<Party> = {}): Caller => ({
  kind: 'agent',
  identity: { org: 'acme', enabled: true, claimed: true, ...identity },
});
const acmeWorker: Party = { org: 'acme', enabled: true, claimed: true };
const globexWorker: Party = { org: 'globex', enabled: true, claimed: true };

export const PROTOCOL_CASES: ProtocolCase[] = [
  // 401: API key missing or invalid.
  { name: 'no credential', caller: { kind: 'none' }, worker: acmeWorker, status: 401, reason: 'unauthenticated' },
  {
    name: 'a malformed key',
    caller: { kind: 'malformed' },
    worker: acmeWorker,
    status: 401,
    reason: 'unauthenticated',
  },
  {
    name: 'a revoked agent key',
    caller: { kind: 'revokedAgent' },
    worker: acmeWorker,
    status: 401,
    reason: 'unauthenticated',
  },
  // An expired key is the one 401 with a reason of its own: the caller can mint a new key (docs/api.md §2, §5).
  {
    name: 'an expired agent key',
    caller: { kind: 'expiredAgent' },
    worker: acmeWorker,
    status: 401,
    reason: 'api_key_expired',
  },
  // 403: a valid credential that may not call.
  {
    name: 'an admin-scoped key',
    caller: { kind: 'admin' },
    worker: acmeWorker,
    status: 403,
    reason: 'admin_key_not_allowed',
  },
  {
    name: 'a Console session',
    caller: { kind: 'console' },
    worker: acmeWorker,
    status: 403,
    reason: 'console_session_not_allowed',
  },
  {
    name: 'an unclaimed caller',
    caller: { kind: 'agent', identity: { org: 'acme', claimed: false } },
    worker: acmeWorker,
    status: 403,
    reason: 'identity_unclaimed',
  },
  {
    name: 'a caller whose receiver is disabled',
    caller: caller({ enabled: false }),
    worker: acmeWorker,
    status: 403,
    reason: 'requester_disabled',
  },
  // 404: no enabled, claimed identity for the handle.
  { name: 'an unknown handle', caller: caller(), worker: 'missing', status: 404, reason: 'worker_not_found' },
  {
    name: 'a disabled worker',
    caller: caller(),
    worker: { ...acmeWorker, enabled: false },
    status: 404,
    reason: 'worker_not_found',
  },
  {
    name: 'an unclaimed worker',
    caller: caller(),
    worker: { org: 'acme', claimed: false },
    status: 404,
    reason: 'worker_not_found',
  },
  {
    name: 'a deleted worker',
    caller: caller(),
    worker: { ...acmeWorker, deleted: true },
    status: 404,
    reason: 'worker_not_found',
  },
  {
    name: 'an unknown handle, whatever admission would say',
    caller: caller(),
    worker: 'missing',
    rules: [],
    status: 404,
    reason: 'worker_not_found',
  },
  // Admission (docs/api.md §6), in the order of its rules.
  { name: 'same organization, no rules', caller: caller(), worker: acmeWorker, status: 200, reason: null },
  {
    name: 'same organization, but the requester blocks the worker',
    caller: caller(),
    worker: acmeWorker,
    rules: [{ owner: 'requester', direction: 'outbound', action: 'block', peer: 'identity' }],
    status: 403,
    reason: 'admission_denied',
  },
  {
    name: 'same organization, but the worker blocks the requester (both)',
    caller: caller(),
    worker: acmeWorker,
    rules: [{ owner: 'worker', direction: 'both', action: 'block', peer: 'identity' }],
    status: 403,
    reason: 'admission_denied',
  },
  {
    name: 'same organization; the worker blocks only outbound calls',
    caller: caller(),
    worker: acmeWorker,
    rules: [{ owner: 'worker', direction: 'outbound', action: 'block', peer: 'identity' }],
    status: 200,
    reason: null,
  },
  {
    name: 'another organization, no rules (whitelist on both sides)',
    caller: caller(),
    worker: globexWorker,
    status: 403,
    reason: 'admission_denied',
  },
  {
    name: 'another organization, allow rules on both sides',
    caller: caller(),
    worker: globexWorker,
    rules: [
      { owner: 'requester', direction: 'outbound', action: 'allow', peer: 'identity' },
      { owner: 'worker', direction: 'inbound', action: 'allow', peer: 'organization' },
    ],
    status: 200,
    reason: null,
  },
  {
    name: 'another organization, only the requester allows',
    caller: caller(),
    worker: globexWorker,
    rules: [{ owner: 'requester', direction: 'both', action: 'allow', peer: 'organization' }],
    status: 403,
    reason: 'admission_denied',
  },
  {
    name: 'another organization, only the worker allows',
    caller: caller(),
    worker: globexWorker,
    rules: [{ owner: 'worker', direction: 'both', action: 'allow', peer: 'identity' }],
    status: 403,
    reason: 'admission_denied',
  },
  {
    name: 'another organization, the worker allows and the requester is in blacklist mode',
    caller: caller({ filterMode: 'blacklist' }),
    worker: globexWorker,
    rules: [{ owner: 'worker', direction: 'inbound', action: 'allow', peer: 'identity' }],
    status: 200,
    reason: null,
  },
  {
    name: 'another organization, both in blacklist mode',
    caller: caller({ filterMode: 'blacklist' }),
    worker: { ...globexWorker, filterMode: 'blacklist' },
    status: 200,
    reason: null,
  },
  {
    name: 'another organization, both in blacklist mode, the worker blocks the organization',
    caller: caller({ filterMode: 'blacklist' }),
    worker: { ...globexWorker, filterMode: 'blacklist' },
    rules: [{ owner: 'worker', direction: 'inbound', action: 'block', peer: 'organization' }],
    status: 403,
    reason: 'admission_denied',
  },
  {
    name: 'a public worker and a caller with public egress',
    caller: caller({ allowPublicEgress: true }),
    worker: { ...globexWorker, publiclyDiscoverable: true },
    status: 200,
    reason: null,
  },
  {
    name: 'a public worker, but the caller has no public egress',
    caller: caller(),
    worker: { ...globexWorker, publiclyDiscoverable: true },
    status: 403,
    reason: 'admission_denied',
  },
  {
    name: 'public egress to a worker that is not public',
    caller: caller({ allowPublicEgress: true }),
    worker: globexWorker,
    status: 403,
    reason: 'admission_denied',
  },
  {
    name: 'public egress, but the worker blocks the caller',
    caller: caller({ allowPublicEgress: true }),
    worker: { ...globexWorker, publiclyDiscoverable: true },
    rules: [{ owner: 'worker', direction: 'inbound', action: 'block', peer: 'identity' }],
    status: 403,
    reason: 'admission_denied',
  },
  {
    name: 'allow rules on both sides, but the requester also blocks by identity',
    caller: caller(),
    worker: globexWorker,
    rules: [
      { owner: 'requester', direction: 'outbound', action: 'block', peer: 'identity' },
      { owner: 'requester', direction: 'both', action: 'allow', peer: 'organization' },
      { owner: 'worker', direction: 'inbound', action: 'allow', peer: 'organization' },
    ],
    status: 403,
    reason: 'admission_denied',
  },
];
