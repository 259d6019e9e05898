import { randomBytes } from 'node:crypto';
import type { TestApp } from '../support/app';
import {
  agentSignup,
  apiKey,
  bearer,
  createIdentity,
  insertIdentity,
  mintAdminKey,
  mintAgentKey,
  mintKeyDirectly,
  PASSWORD,
  signup,
  type ConsoleAccount,
  type IdentityFixture,
} from '../support/fixtures';

/** Credential kinds of the matrix, in column order. */
export const CREDENTIALS = [
  'none',
  'malformed',
  'revoked',
  'admin',
  'agentUnclaimed',
  'agent',
  'console',
  'otherConsole',
  'otherAdmin',
] as const;
export type Credential = (typeof CREDENTIALS)[number];

/**
 * Access tokens (docs/api.md §17), each for a key of the column it names: a token must
 * get exactly its key's answer. "revokedToken" was issued while its key was active.
 */
export const TOKEN_CREDENTIALS = {
  revokedToken: 'revoked',
  adminToken: 'admin',
  agentUnclaimedToken: 'agentUnclaimed',
  agentToken: 'agent',
  otherAdminToken: 'otherAdmin',
} as const satisfies Record<string, Credential>;
export type TokenCredential = keyof typeof TOKEN_CREDENTIALS;

export type Headers = Record<string, string>;

/**
 * Two organizations. "acme" is the one the matrix's resources belong to: a Console
 * user, an admin key, a claimed identity with its agent key, and an unclaimed
 * identity with its agent key; a second enabled identity, the worker, and a task
 * the claimed identity sent it over the protocol. "other" has a Console user and an
 * admin key.
 */
export class World {
  acme!: ConsoleAccount;
  other!: ConsoleAccount;
  claimed!: IdentityFixture;
  unclaimed!: IdentityFixture;
  worker!: IdentityFixture;
  task!: { id: string; contextId: string };
  private readonly shared = new Map<Credential | TokenCredential, Headers>();
  private webhookId: string | null = null;

  constructor(readonly t: TestApp) {}

  static async create(t: TestApp): Promise<World> {
    const w = new World(t);
    w.acme = await signup(t, 'Acme');
    w.other = await signup(t, 'Other');
    w.claimed = await insertIdentity(t, { organizationId: w.acme.organizationId, enabled: true });
    w.unclaimed = await insertIdentity(t, { organizationId: null });
    w.worker = await insertIdentity(t, { organizationId: w.acme.organizationId, enabled: true });
    for (const kind of ['revoked', 'admin', 'agentUnclaimed', 'agent', 'otherAdmin'] as const) {
      w.shared.set(kind, await w.fresh(kind));
    }
    w.shared.set('none', {});
    w.shared.set('malformed', apiKey('a2a_adm_thisIsNotAValidKeyAtAllxxxxxxxxxxxxx'));
    w.shared.set('console', bearer(w.acme));
    w.shared.set('otherConsole', bearer(w.other));
    w.task = await w.send(w.headers('agent'), 'matrix-task');
    for (const kind of Object.keys(TOKEN_CREDENTIALS) as TokenCredential[]) {
      w.shared.set(kind, await w.freshToken(kind));
    }
    return w;
  }

  headers(kind: Credential | TokenCredential): Headers {
    return this.shared.get(kind)!;
  }

  /** `Authorization: Bearer` with an access token for a fresh key of the token's column. */
  async freshToken(kind: TokenCredential): Promise<Headers> {
    const { t } = this;
    const keyKind = TOKEN_CREDENTIALS[kind];
    const key = (await this.fresh(keyKind === 'revoked' ? 'admin' : keyKind))['X-API-Key'];
    const { id } = (await t.http().get('/api-keys/self').set(apiKey(key)).expect(200)).body as { id: string };
    const res = await t
      .http()
      .post('/oauth/token')
      .type('form')
      .send(new URLSearchParams({ grant_type: 'client_credentials', client_id: id, client_secret: key }).toString())
      .expect(200);
    if (keyKind === 'revoked') {
      await t.http().post('/api-keys/self/revoke').set(apiKey(key)).expect(200);
    }
    return { Authorization: `Bearer ${res.body.access_token}` };
  }

  /** A credential of this kind that no other cell uses (for routes that consume it). */
  async fresh(kind: Credential): Promise<Headers> {
    const { t } = this;
    switch (kind) {
      case 'none':
      case 'malformed':
        return this.headers(kind);
      case 'revoked': {
        const key = await mintAdminKey(t, this.acme);
        await t.http().post('/api-keys/self/revoke').set(apiKey(key)).expect(200);
        return apiKey(key);
      }
      case 'admin':
        return apiKey(await mintAdminKey(t, this.acme));
      case 'otherAdmin':
        return apiKey(await mintAdminKey(t, this.other));
      case 'agent':
        return apiKey(await mintAgentKey(t, this.acme, this.claimed.id));
      case 'agentUnclaimed':
        return apiKey(await mintKeyDirectly(t, this.unclaimed.id));
      case 'console':
      case 'otherConsole': {
        const account = kind === 'console' ? this.acme : this.other;
        const res = await t
          .http()
          .post('/api/v1/console/login')
          .send({ email: account.email, password: PASSWORD })
          .expect(200);
        return { Authorization: `Bearer ${res.body.token}` };
      }
    }
  }

  /** A new member of acme or other (invited and accepted); returns the member's id and session headers. */
  async freshMember(kind: 'console' | 'otherConsole' = 'console'): Promise<{ id: string; headers: Headers }> {
    const owner = kind === 'console' ? this.acme : this.other;
    const code = await this.inviteCode(owner);
    const res = await this.t
      .http()
      .post('/api/v1/console/invites/accept')
      .send({ code, password: PASSWORD })
      .expect(201);
    return { id: res.body.user.id, headers: { Authorization: `Bearer ${res.body.token}` } };
  }

  /** A fresh open invitation of acme (or another organization's): its id. */
  async acmeInviteId(): Promise<string> {
    const res = await this.t
      .http()
      .post('/api/v1/console/invites')
      .set(bearer(this.acme))
      .send({ email: `matrix-${randomBytes(4).toString('hex')}@example.test` })
      .expect(201);
    return res.body.id;
  }

  /** The code of a fresh invitation (acme's unless told), for a cell to accept. */
  async inviteCode(owner: ConsoleAccount = this.acme): Promise<string> {
    const res = await this.t
      .http()
      .post('/api/v1/console/invites')
      .set(bearer(owner))
      .send({ email: `matrix-${randomBytes(4).toString('hex')}@example.test` })
      .expect(201);
    return (res.body.url as string).split('#')[1];
  }

  /** An organization-wide webhook of acme; `fresh` for a cell that may delete it (an organization has at most 50). */
  async acmeWebhookId(fresh = false): Promise<string> {
    if (!fresh && this.webhookId) {
      return this.webhookId;
    }
    const res = await this.t
      .http()
      .post('/api/v1/webhooks')
      .set(bearer(this.acme))
      .send({ url: 'https://hooks.example.invalid/matrix', events: ['*'] })
      .expect(201);
    if (!fresh) {
      this.webhookId = res.body.id;
    }
    return res.body.id;
  }

  /** A new delivery (a test ping) of acme's webhook, for the delivery routes. */
  async acmeDelivery(): Promise<{ webhookId: string; deliveryId: string }> {
    const webhookId = await this.acmeWebhookId();
    const res = await this.t.http().post(`/api/v1/webhooks/${webhookId}/test`).set(bearer(this.acme)).expect(202);
    return { webhookId, deliveryId: res.body.id };
  }

  /** A fresh identity of acme that a cell may delete. */
  async acmeIdentityHandle(): Promise<string> {
    return (await createIdentity(this.t, bearer(this.acme))).agent_handle;
  }

  /** A fresh claim code from an agent signup, for a cell to claim. */
  async claimCode(): Promise<string> {
    return (await agentSignup(this.t)).claimCode;
  }

  /** A fresh trusted issuer of acme (docs/api.md §17), for a cell that may read or delete it. */
  async acmeTrustId(): Promise<string> {
    const res = await this.t
      .http()
      .post('/api/v1/trusted-issuers')
      .set(bearer(this.acme))
      .send({
        issuer: 'https://issuer.example.invalid',
        audience: `matrix-${randomBytes(4).toString('hex')}`,
        subjects: { workload: this.claimed.handle },
      })
      .expect(201);
    return res.body.id;
  }

  /** An admin key of acme that a cell may revoke or edit. */
  async acmeKeyId(): Promise<string> {
    const res = await this.t
      .http()
      .post('/api/v1/api-keys')
      .set(bearer(this.acme))
      .send({ scope: 'admin' })
      .expect(201);
    return res.body.id;
  }

  /** The handle of a new identity of "other", for a contact rule no other cell has made. */
  async freshPeer(): Promise<string> {
    return (await insertIdentity(this.t, { organizationId: this.other.organizationId })).handle;
  }

  /** A contact rule owned by acme's claimed identity that a cell may edit or delete. */
  async acmeRuleId(): Promise<string> {
    const res = await this.t
      .http()
      .post('/api/v1/contact-rules')
      .set(bearer(this.acme))
      .send({
        identity: this.claimed.handle,
        direction: 'both',
        action: 'allow',
        peer: { type: 'identity', handle: await this.freshPeer() },
      })
      .expect(201);
    return res.body.id;
  }

  /**
   * A pending approval request of acme, for a cell that may decide it: the worker asks
   * (an `ask` rule) about a new requester of acme, which sends it a task.
   */
  async acmeApprovalId(): Promise<string> {
    const requester = await insertIdentity(this.t, { organizationId: this.acme.organizationId, enabled: true });
    const key = await mintAgentKey(this.t, this.acme, requester.id);
    await this.t
      .http()
      .post('/api/v1/contact-rules')
      .set(bearer(this.acme))
      .send({
        identity: this.worker.handle,
        direction: 'inbound',
        action: 'ask',
        peer: { type: 'identity', handle: requester.handle },
      })
      .expect(201);
    const sent = await this.send(apiKey(key), 'matrix-held');
    const [request] = (await this.t.db.query(`SELECT approval_id AS id FROM approval_tasks WHERE task_id = $1`, [
      sent.id,
    ])) as Array<{ id: string }>;
    return request.id;
  }

  /** A new submitted task of acme's claimed identity with the worker, for a cell that may cancel it. */
  async newTask(): Promise<string> {
    return (await this.send(this.headers('agent'), `matrix-${Math.random()}`)).id;
  }

  /** A non-blocking v0.3 send to the worker with these credentials: the task it created. */
  private async send(headers: Headers, messageId: string): Promise<{ id: string; contextId: string }> {
    const sent = await this.t
      .http()
      .post(`/a2a/${this.worker.handle}`)
      .set(headers)
      .send({
        jsonrpc: '2.0',
        id: 1,
        method: 'message/send',
        params: {
          message: { kind: 'message', role: 'user', messageId, parts: [{ kind: 'text', text: 'hello' }] },
          configuration: { blocking: false },
        },
      })
      .expect(200);
    return { id: sent.body.result.id, contextId: sent.body.result.contextId };
  }

  private completed: string | null = null;

  /** A completed task of acme's claimed identity with the worker: a stream on it answers at once. */
  async completedTask(): Promise<string> {
    if (!this.completed) {
      const id = await this.newTask();
      await this.t
        .http()
        .post(`/api/v1/tasks/${id}/reply`)
        .set(bearer(this.acme))
        .send({ state: 'completed' })
        .expect(200);
      this.completed = id;
    }
    return this.completed;
  }

  /** A push notification config on a new task (a task holds at most 10), for a cell that may read or delete it. */
  async pushConfig(): Promise<{ taskId: string; configId: string }> {
    const taskId = await this.newTask();
    const res = await this.t
      .http()
      .post(`/a2a/${this.worker.handle}`)
      .set(this.headers('agent'))
      .send({
        jsonrpc: '2.0',
        id: 1,
        method: 'tasks/pushNotificationConfig/set',
        params: { taskId, pushNotificationConfig: { url: 'https://hooks.example.invalid/push' } },
      })
      .expect(200);
    return { taskId, configId: res.body.result.pushNotificationConfig.id as string };
  }
}
