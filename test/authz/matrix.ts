import { randomBytes } from 'node:crypto';
import { unique } from '../support/fixtures';
import { CREDENTIALS, type Credential, type World } from './world';

/**
 * The authorization matrix: every route × every credential kind → the status the
 * route must answer. Columns, in order:
 *
 *   none  malformed  revoked  admin  agentUnclaimed  agent  console  otherConsole  otherAdmin
 *
 * "agent" is the agent key of acme's claimed identity; "other*" belong to a second
 * organization and must never reach acme's resources. A route without a row fails
 * the suite (see authz.e2e-spec.ts).
 */
export interface MatrixRow {
  route: string;
  statuses: Record<Credential, number>;
  /** The concrete path (may create a fresh resource for the cell). */
  path?: (w: World) => string | Promise<string>;
  /** The request body (may create a fresh resource for the cell). */
  body?: (w: World) => unknown | Promise<unknown>;
  /** The route consumes the credential (logout, self-revoke): use a fresh one per cell. */
  consumesCredential?: boolean;
  /** The route changes the person's own account (password): Console cells act as a fresh member of their organization. */
  ownAccount?: boolean;
}

type Statuses = [number, number, number, number, number, number, number, number, number];

function row(route: string, statuses: Statuses, options: Omit<MatrixRow, 'route' | 'statuses'> = {}): MatrixRow {
  return {
    route,
    statuses: Object.fromEntries(CREDENTIALS.map((c, i) => [c, statuses[i]])) as Record<Credential, number>,
    ...options,
  };
}

const email = () => `matrix-${randomBytes(4).toString('hex')}@example.test`;

/** An upstream the matrix never reaches (named in full, so setting it reads no card). */
const UPSTREAM = { url: 'https://upstream.example.invalid/a2a', protocol_version: '1.0', binding: 'JSONRPC' };

/** Acme's claimed identity, with an upstream set (again, for cells that remove it). */
async function withUpstream(w: World): Promise<string> {
  await w.t.db.query(
    `INSERT INTO identity_upstreams (identity_id, url, protocol_version, binding) VALUES ($1, $2, '1.0', 'JSONRPC') ON CONFLICT DO NOTHING`,
    [w.claimed.id, UPSTREAM.url],
  );
  return w.claimed.handle;
}

//                                                    none mal  rev  adm  unc  agt  con  oCon oAdm
export const MATRIX: MatrixRow[] = [
  // Operations and Console entry points: public.
  row('GET /healthz', [200, 200, 200, 200, 200, 200, 200, 200, 200]),
  row('GET /readyz', [200, 200, 200, 200, 200, 200, 200, 200, 200]),
  row('POST /api/v1/console/signup', [201, 201, 201, 201, 201, 201, 201, 201, 201], {
    body: () => ({ organization_name: 'Matrix', email: email(), password: 'correct horse battery staple' }),
  }),
  row('POST /api/v1/console/login', [401, 401, 401, 401, 401, 401, 401, 401, 401], {
    body: () => ({ email: email(), password: 'not the password' }),
  }),
  // Single sign-on (docs/api.md §13): browser navigations, public; not configured in the matrix's service.
  row('GET /api/v1/console/sso/config', [200, 200, 200, 200, 200, 200, 200, 200, 200]),
  row('GET /api/v1/console/sso', [404, 404, 404, 404, 404, 404, 404, 404, 404]),
  row('GET /api/v1/console/sso/callback', [404, 404, 404, 404, 404, 404, 404, 404, 404]),

  // OAuth (docs/api.md §17): the metadata is public; the token endpoint authenticates its client from the form
  // (none here: a request without grant_type is refused before any credential is read).
  row('GET /.well-known/oauth-authorization-server', [200, 200, 200, 200, 200, 200, 200, 200, 200]),
  row('POST /oauth/token', [400, 400, 400, 400, 400, 400, 400, 400, 400]),

  // Trusted issuers (docs/api.md §17): admin key or Console of the organization; another organization's is a 404,
  // and the subjects of a new one must be identities of the caller's organization (acme's are not other's: 400).
  row('POST /api/v1/trusted-issuers', [401, 401, 401, 201, 403, 403, 201, 400, 400], {
    body: (w) => ({
      issuer: 'https://issuer.example.invalid',
      audience: unique('matrix'),
      subjects: { workload: w.claimed.handle },
    }),
  }),
  row('GET /api/v1/trusted-issuers', [401, 401, 401, 200, 403, 403, 200, 200, 200]),
  row('GET /api/v1/trusted-issuers/:id', [401, 401, 401, 200, 403, 403, 200, 404, 404], {
    path: async (w) => `/api/v1/trusted-issuers/${await w.acmeTrustId()}`,
  }),
  row('PATCH /api/v1/trusted-issuers/:id', [401, 401, 401, 200, 403, 403, 200, 404, 404], {
    path: async (w) => `/api/v1/trusted-issuers/${await w.acmeTrustId()}`,
    body: () => ({ subject_claim: 'client_id' }),
  }),
  row('DELETE /api/v1/trusted-issuers/:id', [401, 401, 401, 204, 403, 403, 204, 404, 404], {
    path: async (w) => `/api/v1/trusted-issuers/${await w.acmeTrustId()}`,
  }),

  // Console session routes.
  row('GET /api/v1/console/me', [401, 401, 401, 403, 403, 403, 200, 200, 403]),
  row('POST /api/v1/console/logout', [401, 401, 401, 403, 403, 403, 204, 204, 403], { consumesCredential: true }),
  row('POST /api/v1/console/password', [401, 401, 401, 403, 403, 403, 204, 204, 403], {
    ownAccount: true,
    body: () => ({ current_password: 'correct horse battery staple', new_password: 'another long passphrase' }),
  }),

  // Teams (docs/api.md §13): a person's acts, Console only. Accepting needs no credential.
  row('POST /api/v1/console/invites', [401, 401, 401, 403, 403, 403, 201, 201, 403], {
    body: () => ({ email: email() }),
  }),
  row('GET /api/v1/console/invites', [401, 401, 401, 403, 403, 403, 200, 200, 403]),
  row('DELETE /api/v1/console/invites/:id', [401, 401, 401, 403, 403, 403, 204, 404, 403], {
    path: async (w) => `/api/v1/console/invites/${await w.acmeInviteId()}`,
  }),
  row('POST /api/v1/console/invites/lookup', [200, 200, 200, 200, 200, 200, 200, 200, 200], {
    body: async (w) => ({ code: await w.inviteCode() }),
  }),
  row('POST /api/v1/console/invites/accept', [201, 201, 201, 201, 201, 201, 201, 201, 201], {
    body: async (w) => ({ code: await w.inviteCode(), password: 'correct horse battery staple' }),
  }),
  row('GET /api/v1/console/members', [401, 401, 401, 403, 403, 403, 200, 200, 403]),
  row('DELETE /api/v1/console/members/:id', [401, 401, 401, 403, 403, 403, 204, 404, 403], {
    path: async (w) => `/api/v1/console/members/${(await w.freshMember()).id}`,
  }),

  // API keys (docs/api.md §2, who may mint).
  row('POST /api/v1/api-keys', [401, 401, 401, 201, 403, 403, 201, 404, 404], {
    body: (w) => ({ scope: 'agent', scoped_identity_id: w.claimed.id }),
  }),
  row('GET /api/v1/api-keys', [401, 401, 401, 200, 403, 403, 200, 200, 200]),
  row('GET /api/v1/api-keys/:id', [401, 401, 401, 200, 403, 403, 200, 404, 404], {
    path: async (w) => `/api/v1/api-keys/${await w.acmeKeyId()}`,
  }),
  row('PATCH /api/v1/api-keys/:id', [401, 401, 401, 403, 403, 403, 200, 404, 403], {
    path: async (w) => `/api/v1/api-keys/${await w.acmeKeyId()}`,
    body: () => ({ label: 'renamed' }),
  }),
  row('POST /api/v1/api-keys/:id/revoke', [401, 401, 401, 403, 403, 403, 200, 404, 403], {
    path: async (w) => `/api/v1/api-keys/${await w.acmeKeyId()}/revoke`,
  }),
  row('GET /api-keys/self', [401, 401, 401, 200, 200, 200, 403, 403, 200]),
  row('POST /api-keys/self/revoke', [401, 401, 401, 200, 200, 200, 403, 403, 200], { consumesCredential: true }),

  // Organization settings (docs/api.md §2, key lifetimes): each organization its own.
  row('GET /api/v1/organization/settings', [401, 401, 401, 200, 403, 403, 200, 200, 200]),
  row('PATCH /api/v1/organization/settings', [401, 401, 401, 200, 403, 403, 200, 200, 200], {
    body: () => ({ max_key_lifetime_days: null }),
  }),

  // Identities (docs/api.md §3). The unclaimed identity's key reads only itself: 403
  // everywhere else. Other organizations never learn that acme's identity exists.
  row('POST /api/v1/agent-signup', [201, 201, 201, 201, 201, 201, 201, 201, 201], {
    body: () => ({ agent_handle: unique('matrix') }),
  }),
  row('POST /api/v1/identities', [401, 401, 401, 201, 403, 403, 201, 201, 201], {
    body: () => ({ agent_handle: unique('matrix') }),
  }),
  row('POST /api/v1/identities/claim', [401, 401, 401, 403, 403, 403, 200, 200, 403], {
    body: async (w) => ({ claim_code: await w.claimCode() }),
  }),
  row('GET /api/v1/identities/:handle', [401, 401, 401, 200, 403, 200, 200, 404, 404], {
    path: (w) => `/api/v1/identities/${w.claimed.handle}`,
  }),
  // The card preview (docs/api.md §4): admin key or Console of the identity's organization.
  row('GET /api/v1/identities/:handle/card-preview', [401, 401, 401, 200, 403, 403, 200, 404, 404], {
    path: (w) => `/api/v1/identities/${w.claimed.handle}/card-preview`,
  }),
  row('PATCH /api/v1/identities/:handle', [401, 401, 401, 200, 403, 200, 200, 404, 404], {
    path: (w) => `/api/v1/identities/${w.claimed.handle}`,
    body: () => ({ description: 'Edited by the matrix.' }),
  }),
  row('GET /api/v1/identities/:handle/settings', [401, 401, 401, 200, 403, 200, 200, 404, 404], {
    path: (w) => `/api/v1/identities/${w.claimed.handle}/settings`,
  }),
  row('PATCH /api/v1/identities/:handle/settings', [401, 401, 401, 200, 403, 200, 200, 404, 404], {
    path: (w) => `/api/v1/identities/${w.claimed.handle}/settings`,
    body: () => ({ allow_public_egress: true }),
  }),
  row('DELETE /api/v1/identities/:handle', [401, 401, 401, 204, 403, 403, 204, 404, 404], {
    path: async (w) => `/api/v1/identities/${await w.acmeIdentityHandle()}`,
  }),

  // Discovery (docs/api.md §1, §4): public cards and directory; the organization
  // directory for admin keys, claimed agent keys and Console.
  row('GET /api/v1/identities/a2a/directory', [401, 401, 401, 200, 403, 200, 200, 200, 200]),
  row('GET /a2a/directory', [200, 200, 200, 200, 200, 200, 200, 200, 200]),
  row('GET /a2a/:handle/card', [200, 200, 200, 200, 200, 200, 200, 200, 200], {
    path: (w) => `/a2a/${w.claimed.handle}/card`,
  }),
  row('GET /a2a/:handle/.well-known/agent-card.json', [200, 200, 200, 200, 200, 200, 200, 200, 200], {
    path: (w) => `/a2a/${w.claimed.handle}/.well-known/agent-card.json`,
  }),
  row('GET /.well-known/jwks.json', [200, 200, 200, 200, 200, 200, 200, 200, 200]),
  row('GET /.well-known/ai-catalog.json', [200, 200, 200, 200, 200, 200, 200, 200, 200]),

  // Contact rules (docs/api.md §1: listing is a ledger read; create, update, delete need an
  // admin key or Console; docs/api.md §6: of the owner's organization).
  row('GET /api/v1/contact-rules', [401, 401, 401, 200, 403, 200, 200, 200, 200]),
  row('POST /api/v1/contact-rules', [401, 401, 401, 201, 403, 403, 201, 404, 404], {
    body: async (w) => ({
      identity: w.claimed.handle,
      direction: 'inbound',
      action: 'allow',
      peer: { type: 'identity', handle: await w.freshPeer() },
    }),
  }),
  row('PATCH /api/v1/contact-rules/:id', [401, 401, 401, 200, 403, 403, 200, 404, 404], {
    path: async (w) => `/api/v1/contact-rules/${await w.acmeRuleId()}`,
    body: () => ({ action: 'block' }),
  }),
  row('DELETE /api/v1/contact-rules/:id', [401, 401, 401, 204, 403, 403, 204, 404, 404], {
    path: async (w) => `/api/v1/contact-rules/${await w.acmeRuleId()}`,
  }),

  // Admission explanations (docs/api.md §6): admin key or Console; only the caller's side.
  row('POST /api/v1/admission/check', [401, 401, 401, 200, 403, 403, 200, 404, 404], {
    body: (w) => ({ requester: w.claimed.handle, worker: w.claimed.handle }),
  }),
  row('GET /api/v1/admission/decisions', [401, 401, 401, 200, 403, 403, 200, 200, 200]),

  // Approvals (docs/api.md §16): the deciding organization's admin keys and Console; another's request is a 404.
  row('GET /api/v1/approvals', [401, 401, 401, 200, 403, 403, 200, 200, 200]),
  row('POST /api/v1/approvals/:id/approve', [401, 401, 401, 200, 403, 403, 200, 404, 404], {
    path: async (w) => `/api/v1/approvals/${await w.acmeApprovalId()}/approve`,
    body: () => ({ remember: 'once' }),
  }),
  row('POST /api/v1/approvals/:id/deny', [401, 401, 401, 200, 403, 403, 200, 404, 404], {
    path: async (w) => `/api/v1/approvals/${await w.acmeApprovalId()}/deny`,
    body: () => ({ remember: 'once', reason: 'matrix' }),
  }),

  // The protocol (docs/api.md §1, §5): a claimed agent key only. A
  // JSON-RPC call the caller may make answers HTTP 200 (here: tasks/get of its task).
  row('POST /a2a/:handle', [401, 401, 401, 403, 403, 200, 403, 403, 403], {
    path: (w) => `/a2a/${w.worker.handle}`,
    body: (w) => ({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: w.task.id } }),
  }),

  // The HTTP+JSON binding (docs/api.md §5): the same checks as the JSON-RPC endpoint, each
  // route answering as the SDK's restHandler does (v0.3's under /v1: no A2A-Version).
  // A stream on a completed task answers at once with the method's error (400).
  ...restBindingRows(),

  // The ledger (docs/api.md §7): the task is acme's claimed identity → acme's worker.
  row('GET /api/v1/tasks', [401, 401, 401, 200, 403, 200, 200, 200, 200]),
  row('GET /api/v1/tasks/:id', [401, 401, 401, 200, 403, 200, 200, 404, 404], {
    path: (w) => `/api/v1/tasks/${w.task.id}`,
  }),
  row('GET /api/v1/tasks/:id/messages', [401, 401, 401, 200, 403, 200, 200, 404, 404], {
    path: (w) => `/api/v1/tasks/${w.task.id}/messages`,
  }),
  row('GET /api/v1/tasks/:id/tree', [401, 401, 401, 200, 403, 200, 200, 404, 404], {
    path: (w) => `/api/v1/tasks/${w.task.id}/tree`,
  }),
  // The worker side only: "agent" is the task's requester → 403.
  row('POST /api/v1/tasks/:id/reply', [401, 401, 401, 200, 403, 403, 200, 404, 404], {
    path: (w) => `/api/v1/tasks/${w.task.id}/reply`,
    body: () => ({ state: 'working' }),
  }),
  row('GET /api/v1/contexts', [401, 401, 401, 200, 403, 200, 200, 200, 200]),
  row('GET /api/v1/contexts/:id', [401, 401, 401, 200, 403, 200, 200, 404, 404], {
    path: (w) => `/api/v1/contexts/${w.task.contextId}`,
  }),

  // Webhooks (docs/api.md §8). The resource is an organization-wide webhook of acme: acme's
  // agent key may only reach its own identity's webhooks (404), the other
  // organization never (404). Creating one is open to every organization and, for an
  // agent key, subscribes its own identity.
  row('POST /api/v1/webhooks', [401, 401, 401, 201, 403, 201, 201, 201, 201], {
    body: () => ({ url: 'https://hooks.example.invalid/matrix', events: ['task.created'] }),
  }),
  row('GET /api/v1/webhooks', [401, 401, 401, 200, 403, 200, 200, 200, 200]),
  row('GET /api/v1/webhooks/:id', [401, 401, 401, 200, 403, 404, 200, 404, 404], {
    path: async (w) => `/api/v1/webhooks/${await w.acmeWebhookId()}`,
  }),
  row('PATCH /api/v1/webhooks/:id', [401, 401, 401, 200, 403, 404, 200, 404, 404], {
    path: async (w) => `/api/v1/webhooks/${await w.acmeWebhookId()}`,
    body: () => ({ description: 'renamed' }),
  }),
  row('DELETE /api/v1/webhooks/:id', [401, 401, 401, 204, 403, 404, 204, 404, 404], {
    path: async (w) => `/api/v1/webhooks/${await w.acmeWebhookId(true)}`,
  }),
  row('POST /api/v1/webhooks/:id/rotate-secret', [401, 401, 401, 200, 403, 404, 200, 404, 404], {
    path: async (w) => `/api/v1/webhooks/${await w.acmeWebhookId()}/rotate-secret`,
  }),
  row('POST /api/v1/webhooks/:id/test', [401, 401, 401, 202, 403, 404, 202, 404, 404], {
    path: async (w) => `/api/v1/webhooks/${await w.acmeWebhookId()}/test`,
  }),
  row('GET /api/v1/webhooks/:id/deliveries', [401, 401, 401, 200, 403, 404, 200, 404, 404], {
    path: async (w) => `/api/v1/webhooks/${await w.acmeWebhookId()}/deliveries`,
  }),
  // Upstream agents (docs/api.md §14): admin key or Console set, remove, import and test; the own
  // key reads (never the secret). Import fails after authorization (the upstream is not
  // reachable from the matrix): 422.
  row('PUT /api/v1/identities/:handle/upstream', [401, 401, 401, 200, 403, 403, 200, 404, 404], {
    path: (w) => `/api/v1/identities/${w.claimed.handle}/upstream`,
    body: () => UPSTREAM,
  }),
  row('GET /api/v1/identities/:handle/upstream', [401, 401, 401, 200, 403, 200, 200, 404, 404], {
    path: async (w) => `/api/v1/identities/${await withUpstream(w)}/upstream`,
  }),
  row('POST /api/v1/identities/:handle/upstream/import-card', [401, 401, 401, 422, 403, 403, 422, 404, 404], {
    path: async (w) => `/api/v1/identities/${await withUpstream(w)}/upstream/import-card`,
  }),
  // A test reads the card and stores nothing: the unreachable upstream is a finding (200).
  row('POST /api/v1/identities/:handle/upstream/test', [401, 401, 401, 200, 403, 403, 200, 404, 404], {
    path: (w) => `/api/v1/identities/${w.claimed.handle}/upstream/test`,
    body: () => UPSTREAM,
  }),
  row('DELETE /api/v1/identities/:handle/upstream', [401, 401, 401, 204, 403, 403, 204, 404, 404], {
    path: async (w) => `/api/v1/identities/${await withUpstream(w)}/upstream`,
  }),

  // The event list and stream (docs/api.md §14): every organization sees its own events
  // (an agent key, its identity's). The stream's 200 cells end at SSE_MAX_DURATION_MS.
  row('GET /api/v1/events', [401, 401, 401, 200, 403, 200, 200, 200, 200]),
  row('GET /api/v1/events/stream', [401, 401, 401, 200, 403, 200, 200, 200, 200]),
  // Usage (docs/api.md §18): each organization its own identities' rollups; an agent key its identity's.
  row('GET /api/v1/usage', [401, 401, 401, 200, 403, 200, 200, 200, 200]),
  row('GET /api/v1/usage/trees', [401, 401, 401, 200, 403, 200, 200, 200, 200]),
  // The audit log (docs/api.md §15): admin key or Console, each organization its own entries; agent keys never.
  row('GET /api/v1/audit-events', [401, 401, 401, 200, 403, 403, 200, 200, 200]),
  // The overview (docs/api.md §13): admin key or Console, each organization its own figures; agent keys never.
  row('GET /api/v1/overview', [401, 401, 401, 200, 403, 403, 200, 200, 200]),
  row('POST /api/v1/webhooks/:id/deliveries/:delivery_id/retry', [401, 401, 401, 202, 403, 404, 202, 404, 404], {
    path: async (w) => {
      const { webhookId, deliveryId } = await w.acmeDelivery();
      return `/api/v1/webhooks/${webhookId}/deliveries/${deliveryId}/retry`;
    },
  }),
];

const say = (text: string) => ({ messageId: `matrix-${Math.random()}`, role: 'ROLE_USER', parts: [{ text }] });
const sayV03 = (text: string, taskId?: string) => ({
  messageId: `matrix-${Math.random()}`,
  role: 'ROLE_USER',
  content: [{ text }],
  ...(taskId ? { taskId } : {}),
});
const PUSH_URL = 'https://hooks.example.invalid/push';

function restBindingRows(): MatrixRow[] {
  const base = (w: World) => `/a2a/${w.worker.handle}/rest`;
  const binding = (route: string, agent: number, options: Omit<MatrixRow, 'route' | 'statuses'>) =>
    row(
      `${route.split(' ')[0]} /a2a/:handle/rest/${route.split(' ')[1]}`,
      [401, 401, 401, 403, 403, agent, 403, 403, 403],
      options,
    );
  return [
    binding('POST message\\:send', 200, {
      path: (w) => `${base(w)}/message:send`,
      body: () => ({ message: say('hello'), configuration: { returnImmediately: true } }),
    }),
    binding('POST v1/message\\:send', 201, {
      path: (w) => `${base(w)}/v1/message:send`,
      body: () => ({ request: sayV03('hello'), configuration: { blocking: false } }),
    }),
    binding('POST message\\:stream', 400, {
      path: (w) => `${base(w)}/message:stream`,
      body: async (w) => ({ message: { ...say('more'), taskId: await w.completedTask() } }),
    }),
    binding('POST v1/message\\:stream', 400, {
      path: (w) => `${base(w)}/v1/message:stream`,
      body: async (w) => ({ request: sayV03('more', await w.completedTask()) }),
    }),
    binding('GET tasks/:taskId\\:subscribe', 400, {
      path: async (w) => `${base(w)}/tasks/${await w.completedTask()}:subscribe`,
    }),
    binding('POST tasks/:taskId\\:subscribe', 400, {
      path: async (w) => `${base(w)}/tasks/${await w.completedTask()}:subscribe`,
    }),
    binding('GET v1/tasks/:taskId\\:subscribe', 400, {
      path: async (w) => `${base(w)}/v1/tasks/${await w.completedTask()}:subscribe`,
    }),
    binding('POST v1/tasks/:taskId\\:subscribe', 400, {
      path: async (w) => `${base(w)}/v1/tasks/${await w.completedTask()}:subscribe`,
    }),
    binding('POST tasks/:taskId\\:cancel', 200, { path: async (w) => `${base(w)}/tasks/${await w.newTask()}:cancel` }),
    binding('POST v1/tasks/:taskId\\:cancel', 200, {
      path: async (w) => `${base(w)}/v1/tasks/${await w.newTask()}:cancel`,
    }),
    binding('GET tasks', 200, { path: (w) => `${base(w)}/tasks` }),
    binding('GET tasks/:taskId', 200, { path: (w) => `${base(w)}/tasks/${w.task.id}` }),
    binding('GET v1/tasks/:taskId', 200, { path: (w) => `${base(w)}/v1/tasks/${w.task.id}` }),
    binding('POST tasks/:taskId/pushNotificationConfigs', 201, {
      path: async (w) => `${base(w)}/tasks/${await w.newTask()}/pushNotificationConfigs`,
      body: () => ({ url: PUSH_URL }),
    }),
    binding('POST v1/tasks/:taskId/pushNotificationConfigs', 201, {
      path: async (w) => `${base(w)}/v1/tasks/${w.task.id}/pushNotificationConfigs`,
      body: async (w) => {
        const taskId = await w.newTask();
        return { name: `tasks/${taskId}/pushNotificationConfigs/matrix`, pushNotificationConfig: { url: PUSH_URL } };
      },
    }),
    binding('GET tasks/:taskId/pushNotificationConfigs', 200, {
      path: (w) => `${base(w)}/tasks/${w.task.id}/pushNotificationConfigs`,
    }),
    binding('GET v1/tasks/:taskId/pushNotificationConfigs', 200, {
      path: (w) => `${base(w)}/v1/tasks/${w.task.id}/pushNotificationConfigs`,
    }),
    binding('GET tasks/:taskId/pushNotificationConfigs/:configId', 200, {
      path: async (w) => {
        const { taskId, configId } = await w.pushConfig();
        return `${base(w)}/tasks/${taskId}/pushNotificationConfigs/${configId}`;
      },
    }),
    binding('GET v1/tasks/:taskId/pushNotificationConfigs/:configId', 200, {
      path: async (w) => {
        const { taskId, configId } = await w.pushConfig();
        return `${base(w)}/v1/tasks/${taskId}/pushNotificationConfigs/${configId}`;
      },
    }),
    binding('DELETE tasks/:taskId/pushNotificationConfigs/:configId', 204, {
      path: async (w) => {
        const { taskId, configId } = await w.pushConfig();
        return `${base(w)}/tasks/${taskId}/pushNotificationConfigs/${configId}`;
      },
    }),
    binding('DELETE v1/tasks/:taskId/pushNotificationConfigs/:configId', 204, {
      path: async (w) => {
        const { taskId, configId } = await w.pushConfig();
        return `${base(w)}/v1/tasks/${taskId}/pushNotificationConfigs/${configId}`;
      },
    }),
    // The extended card: the worker's card with its admitted skills, for an admitted caller.
    binding('GET extendedAgentCard', 200, { path: (w) => `${base(w)}/extendedAgentCard` }),
    binding('GET v1/card', 200, { path: (w) => `${base(w)}/v1/card` }),
  ];
}
