import { randomUUID } from 'node:crypto';
import { CHANGES_CHANNEL, TaskNotifier } from '../../src/events/task-notifier';
import { RetentionService } from '../../src/retention/retention.service';
import { agentPair, openStream, rpc, submitTask } from '../support/a2a';
import { startApp, type TestApp } from '../support/app';
import { eventually } from '../support/eventually';
import { openEventStream } from '../support/event-stream';
import {
  apiKey,
  bearer,
  createIdentity,
  insertIdentity,
  mintAdminKey,
  signup,
  type ConsoleAccount,
  type IdentityFixture,
} from '../support/fixtures';
import { urlFor } from '../support/database';
import { startReceiver, subscribe, type Receiver } from '../support/receiver';
import { startWorkerProcess } from '../support/server-process';

const DAY_MS = 86_400_000;
const inDays = (days: number) => new Date(Date.now() + days * DAY_MS).toISOString();

/**
 * Key lifetimes (docs/api.md §2): `expires_at` at minting, the organization's
 * `max_key_lifetime_days`, the refusal of an expired key on every surface (401
 * `api_key_expired`), the list's `expiring_within_days`, and `api_key.expiring` once per
 * key. Expiry is made by moving `expires_at` into the past with SQL, never by waiting.
 */
describe('API key lifetimes', () => {
  let t: TestApp;
  let acme: ConsoleAccount;
  let billing: IdentityFixture;
  let receiver: Receiver;

  beforeAll(async () => {
    // Idle streams re-check their standing every 100 ms.
    t = await startApp({ SSE_KEEPALIVE_MS: '100', WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true' });
    receiver = await startReceiver();
    acme = await signup(t, 'Acme');
    billing = await insertIdentity(t, { organizationId: acme.organizationId });
  });
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });

  const mint = (account: ConsoleAccount, body: Record<string, unknown>) =>
    t.http().post('/api/v1/api-keys').set(bearer(account)).send(body);
  const selfOf = async (key: string): Promise<string> =>
    (await t.http().get('/api-keys/self').set(apiKey(key)).expect(200)).body.id;
  /** Moves the key's expiry a second into the past, as the passing of time would. */
  const expire = (keyId: string) =>
    t.db.query(`UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1`, [keyId]);
  const expectFieldError = (body: { code: string; errors: Array<{ field: string }> }) => {
    expect(body.code).toBe('validation_failed');
    expect(body.errors.map((error) => error.field)).toEqual(['expires_at']);
  };

  describe('minting with expires_at', () => {
    it('a key minted with expires_at shows it in every read; one without shows null', async () => {
      const expiresAt = inDays(30);
      const minted = await mint(acme, { scope: 'admin', expires_at: expiresAt }).expect(201);
      expect(minted.body.expires_at).toBe(expiresAt);
      const read = await t.http().get(`/api/v1/api-keys/${minted.body.id}`).set(bearer(acme)).expect(200);
      expect(read.body.expires_at).toBe(expiresAt);
      const self = await t.http().get('/api-keys/self').set(apiKey(minted.body.key)).expect(200);
      expect(self.body.expires_at).toBe(expiresAt);

      const forever = await mint(acme, { scope: 'agent', scoped_identity_id: billing.id }).expect(201);
      expect(forever.body.expires_at).toBeNull();
    });

    it('an admin key mints agent keys with expires_at too', async () => {
      const admin = await mintAdminKey(t, acme);
      const expiresAt = inDays(2);
      const res = await t
        .http()
        .post('/api/v1/api-keys')
        .set(apiKey(admin))
        .send({ scoped_identity_id: billing.id, expires_at: expiresAt })
        .expect(201);
      expect(res.body).toMatchObject({ scope: 'agent', expires_at: expiresAt });
    });

    it.each([
      ['in the past', new Date(Date.now() - 60_000).toISOString()],
      ['now-ish without a time zone', '2030-01-01T00:00:00'],
      ['not a timestamp', 'tomorrow'],
      ['a number', 1893456000000],
      ['null', null],
    ])('expires_at %s → 400 naming the field, and no key', async (_, expiresAt) => {
      const before = await t.db.query(`SELECT count(*)::int AS count FROM api_keys`);
      const res = await mint(acme, { scope: 'admin', expires_at: expiresAt }).expect(400);
      expectFieldError(res.body);
      expect(await t.db.query(`SELECT count(*)::int AS count FROM api_keys`)).toEqual(before);
    });
  });

  describe("the organization's max_key_lifetime_days", () => {
    let globex: ConsoleAccount;
    let worker: IdentityFixture;

    beforeAll(async () => {
      globex = await signup(t, 'Globex');
      worker = await insertIdentity(t, { organizationId: globex.organizationId });
    });

    const settings = (headers: Record<string, string>) => t.http().patch('/api/v1/organization/settings').set(headers);

    it('reads null at first; an admin key or a Console user sets it; each organization has its own', async () => {
      expect((await t.http().get('/api/v1/organization/settings').set(bearer(globex)).expect(200)).body).toEqual({
        max_key_lifetime_days: null,
        password_sign_in: true,
        sso_email_domains: [],
        require_verified_upstream_cards: false,
      });
      const admin = await mintAdminKey(t, globex);
      expect((await settings(apiKey(admin)).send({ max_key_lifetime_days: 45 }).expect(200)).body).toEqual({
        max_key_lifetime_days: 45,
        password_sign_in: true,
        sso_email_domains: [],
        require_verified_upstream_cards: false,
      });
      expect((await settings(bearer(globex)).send({ max_key_lifetime_days: 30 }).expect(200)).body).toEqual({
        max_key_lifetime_days: 30,
        password_sign_in: true,
        sso_email_domains: [],
        require_verified_upstream_cards: false,
      });
      expect((await t.http().get('/api/v1/organization/settings').set(apiKey(admin)).expect(200)).body).toEqual({
        max_key_lifetime_days: 30,
        password_sign_in: true,
        sso_email_domains: [],
        require_verified_upstream_cards: false,
      });
      expect((await t.http().get('/api/v1/organization/settings').set(bearer(acme)).expect(200)).body).toEqual({
        max_key_lifetime_days: null,
        password_sign_in: true,
        sso_email_domains: [],
        require_verified_upstream_cards: false,
      });
    });

    it.each([[0], [3651], [1.5], ['30'], [[30]]])('max_key_lifetime_days %p → 400', async (value) => {
      const res = await settings(bearer(globex)).send({ max_key_lifetime_days: value }).expect(400);
      expect(new Set(res.body.errors.map((error: { field: string }) => error.field))).toEqual(
        new Set(['max_key_lifetime_days']),
      );
    });

    it('an unknown field → 400; an agent key → 403', async () => {
      await settings(bearer(globex)).send({ name: 'Renamed' }).expect(400);
      const agent = await mint(globex, { scope: 'agent', scoped_identity_id: worker.id }).expect(201);
      await settings(apiKey(agent.body.key)).send({ max_key_lifetime_days: 1 }).expect(403);
    });

    it('a key minted without expires_at expires max days after its creation, whoever mints it', async () => {
      const viaConsole = await mint(globex, { scope: 'admin' }).expect(201);
      expect(Date.parse(viaConsole.body.expires_at) - Date.parse(viaConsole.body.created_at)).toBe(30 * DAY_MS);

      const admin = viaConsole.body.key as string;
      const viaAdmin = await t
        .http()
        .post('/api/v1/api-keys')
        .set(apiKey(admin))
        .send({ scoped_identity_id: worker.id })
        .expect(201);
      expect(Date.parse(viaAdmin.body.expires_at) - Date.parse(viaAdmin.body.created_at)).toBe(30 * DAY_MS);

      // An identity created with `mint_key` gets its key under the same maximum.
      const created = (await createIdentity(t, bearer(globex), { mint_key: true })) as unknown as {
        api_key: { expires_at: string; created_at: string };
      };
      expect(Date.parse(created.api_key.expires_at) - Date.parse(created.api_key.created_at)).toBe(30 * DAY_MS);
    });

    it('expires_at within the maximum is kept; beyond it → 400 naming the field', async () => {
      const within = inDays(29);
      expect((await mint(globex, { scope: 'admin', expires_at: within }).expect(201)).body.expires_at).toBe(within);
      const res = await mint(globex, { scope: 'agent', scoped_identity_id: worker.id, expires_at: inDays(31) }).expect(
        400,
      );
      expectFieldError(res.body);
      expect(res.body.errors[0].message).toContain('30 days');
    });

    it('the change is in the audit log; null lifts the maximum for new keys', async () => {
      const entries = await t
        .http()
        .get('/api/v1/audit-events?action=organization.settings_updated')
        .set(bearer(globex))
        .expect(200);
      expect(entries.body.audit_events[0]).toMatchObject({
        action: 'organization.settings_updated',
        target: { type: 'organization', id: globex.organizationId },
        changes: { max_key_lifetime_days: { before: 45, after: 30 } },
      });
      await settings(bearer(globex)).send({ max_key_lifetime_days: null }).expect(200);
      expect((await mint(globex, { scope: 'admin' }).expect(201)).body.expires_at).toBeNull();
      expect(
        (await mint(globex, { scope: 'admin', expires_at: inDays(400) }).expect(201)).body.expires_at,
      ).toBeTruthy();
    });
  });

  describe('an expired key is refused like a revoked one, with its own code', () => {
    it('REST (admin routes and the unversioned self routes): the very next request after expiry is a 401 api_key_expired', async () => {
      const admin = await mintAdminKey(t, acme);
      const id = await selfOf(admin);
      await t.http().get('/api/v1/api-keys').set(apiKey(admin)).expect(200);
      await expire(id);
      for (const res of [
        await t.http().get('/api/v1/api-keys').set(apiKey(admin)),
        await t.http().get('/api-keys/self').set(apiKey(admin)),
        await t.http().post('/api-keys/self/revoke').set(apiKey(admin)),
        await t.http().get('/api/v1/organization/settings').set(apiKey(admin)),
      ]) {
        expect(res.status).toBe(401);
        expect(res.body).toMatchObject({ status: 401, code: 'api_key_expired' });
        expect(res.body.detail).toContain('expired');
      }
      // Still listed, with its expiry, for the organization's people.
      const read = await t.http().get(`/api/v1/api-keys/${id}`).set(bearer(acme)).expect(200);
      expect(Date.parse(read.body.expires_at)).toBeLessThan(Date.now());
    });

    it('an expired key that was also revoked is refused as revoked', async () => {
      const admin = await mintAdminKey(t, acme);
      const id = await selfOf(admin);
      await t.http().post('/api-keys/self/revoke').set(apiKey(admin)).expect(200);
      await expire(id);
      expect((await t.http().get('/api-keys/self').set(apiKey(admin)).expect(401)).body.code).toBe('invalid_api_key');
    });

    it("the protocol (JSON-RPC, HTTP+JSON): 401 with the reason api_key_expired; the agent's REST routes too", async () => {
      const { requester, worker } = await agentPair(t);
      await submitTask(t, requester, worker);
      await expire(await selfOf(requester.key));
      const res = await rpc(t, worker.handle, requester.key, 'message/send', {
        message: { kind: 'message', role: 'user', messageId: 'm-1', parts: [{ kind: 'text', text: 'hi' }] },
      }).expect(401);
      expect(res.body).toMatchObject({
        jsonrpc: '2.0',
        error: { code: -32000, data: { reason: 'api_key_expired', status: 401 } },
      });
      const v1 = await rpc(t, worker.handle, requester.key, 'ListTasks', {}, '1.0').expect(401);
      expect(v1.body.error.data.reason).toBe('api_key_expired');
      // The HTTP+JSON binding (v1.0): the reason as the problem's code and in the google.rpc ErrorInfo.
      const binding = await t
        .http()
        .get(`/a2a/${worker.handle}/rest/tasks`)
        .set({ ...apiKey(requester.key), 'A2A-Version': '1.0' })
        .expect(401);
      expect(binding.body).toMatchObject({
        code: 'api_key_expired',
        error: { code: 401, status: 'UNAUTHENTICATED', details: [{ reason: 'API_KEY_EXPIRED' }] },
      });
      const tasks = await t.http().get('/api/v1/tasks').set(apiKey(requester.key)).expect(401);
      expect(tasks.body.code).toBe('api_key_expired');
    });
  });

  describe('GET /api/v1/api-keys?expiring_within_days=', () => {
    it('lists the active keys that expire within that many days, not those expired, revoked or later', async () => {
      const account = await signup(t);
      const soon = (await mint(account, { scope: 'admin', expires_at: inDays(3) }).expect(201)).body;
      const later = (await mint(account, { scope: 'admin', expires_at: inDays(20) }).expect(201)).body;
      await mint(account, { scope: 'admin' }).expect(201);
      const expired = (await mint(account, { scope: 'admin', expires_at: inDays(1) }).expect(201)).body;
      await expire(expired.id);
      const revoked = (await mint(account, { scope: 'admin', expires_at: inDays(2) }).expect(201)).body;
      await t.http().post(`/api/v1/api-keys/${revoked.id}/revoke`).set(bearer(account)).expect(200);

      const ids = async (query: string) =>
        (await t.http().get(`/api/v1/api-keys?${query}`).set(bearer(account)).expect(200)).body.api_keys.map(
          (key: { id: string }) => key.id,
        );
      expect(await ids('expiring_within_days=7')).toEqual([soon.id]);
      expect(await ids('expiring_within_days=30')).toEqual([later.id, soon.id]);
      expect(await ids('expiring_within_days=30&limit=1')).toEqual([later.id]);
      for (const bad of ['0', '3651', 'soon', '1.5']) {
        const res = await t.http().get(`/api/v1/api-keys?expiring_within_days=${bad}`).set(bearer(account)).expect(400);
        expect(res.body.errors[0].field).toBe('expiring_within_days');
      }
    });
  });

  describe('api_key.expiring', () => {
    it('is written once per key, API_KEY_EXPIRY_NOTICE_DAYS (7) before expiry, to the organization: list, stream, webhooks', async () => {
      const account = await signup(t);
      const hook = await subscribe(t, receiver, bearer(account), { events: ['api_key.expiring'] });
      const stream = await openEventStream(t.baseUrl, bearer(account), { query: 'type=api_key.expiring' });
      const soon = (await mint(account, { scope: 'admin', label: 'soon', expires_at: inDays(5) }).expect(201)).body;
      await mint(account, { scope: 'admin', label: 'later', expires_at: inDays(8) }).expect(201);
      await mint(account, { scope: 'admin', label: 'never' }).expect(201);

      const retention = t.app.get(RetentionService);
      expect((await retention.runOnce()).api_key_expiry_notices).toBeGreaterThanOrEqual(1);
      // A second pass (or another process's) finds nothing new for this key.
      await retention.runOnce();

      // Exactly one event, whatever the number of passes; the list shows it once the feed's horizon passes it.
      const written = async () =>
        (
          (await t.db.query(
            `SELECT data->'api_key'->>'label' AS label FROM events WHERE organization_id = $1 AND type = 'api_key.expiring' ORDER BY seq`,
            [account.organizationId],
          )) as Array<{ label: string }>
        ).map((row) => row.label);
      expect(await written()).toEqual(['soon']);
      const listed = await eventually(
        () => t.http().get('/api/v1/events?type=api_key.expiring').set(bearer(account)).expect(200),
        (res) => res.body.events.length > 0,
      );
      expect(listed.body.events).toHaveLength(1);
      expect(listed.body.events[0]).toMatchObject({
        type: 'api_key.expiring',
        organization_id: account.organizationId,
        data: { api_key: { id: soon.id, label: 'soon', expires_at: soon.expires_at, status: 'active' } },
      });
      expect(JSON.stringify(listed.body.events[0])).not.toContain(soon.key);

      const streamed = await stream.next();
      expect(streamed).toMatchObject({ id: listed.body.events[0].id, data: { type: 'api_key.expiring' } });
      await stream.close();

      const [delivered] = await hook.take(1);
      expect(delivered).toMatchObject({ id: listed.body.events[0].id, type: 'api_key.expiring' });

      // The later key's turn comes when it is within seven days (here: moved there with SQL).
      await t.db.query(`UPDATE api_keys SET expires_at = now() + interval '6 days' WHERE label = 'later'`);
      await retention.runOnce();
      await retention.runOnce();
      expect(await written()).toEqual(['soon', 'later']);
    });

    it('npm run worker writes them too, for servers that run no dispatcher', async () => {
      // A server of its own on a database of its own: no pass but the worker's can write the notice.
      const server = await startApp({ EVENTS_DISPATCHER: 'off' });
      const worker = await startWorkerProcess({
        DATABASE_URL: urlFor(server.database),
        MIGRATIONS_RUN: 'false',
        RETENTION_INTERVAL_MS: '100',
      });
      try {
        const account = await signup(server);
        const soon = await server
          .http()
          .post('/api/v1/api-keys')
          .set(bearer(account))
          .send({ scope: 'admin', expires_at: inDays(2) })
          .expect(201);
        const written = await eventually(
          () =>
            server.db.query(
              `SELECT data->'api_key'->>'id' AS id FROM events WHERE type = 'api_key.expiring'`,
            ) as Promise<Array<{ id: string }>>,
          (rows) => rows.length > 0,
        );
        expect(written).toEqual([{ id: soon.body.id }]);
      } finally {
        expect(await worker.stop('SIGTERM')).toBe(0);
        await server.close();
      }
      expect(worker.output()).toContain('retention: api_key.expiring events written');
    }, 60_000);

    it('is organization-wide only, like api_key.created: an identity-scoped webhook cannot ask for it', async () => {
      const account = await signup(t);
      const identity = await insertIdentity(t, { organizationId: account.organizationId });
      const res = await t
        .http()
        .post('/api/v1/webhooks')
        .set(bearer(account))
        .send({ url: `${receiver.url}/scoped`, events: ['api_key.expiring'], identity: identity.id })
        .expect(400);
      expect(res.body.errors).toEqual([
        { field: 'events', message: 'api_key.expiring is only sent to organization-wide webhooks.' },
      ]);
    });
  });

  describe('open streams of a key that expires end as for a revoked key', () => {
    type Pair = Awaited<ReturnType<typeof agentPair>>;
    /** The requester subscribed (v0.3) to its task through `app`, the first event (the task) read. */
    async function subscribed(app: TestApp, pair: Pair, taskId: string) {
      const stream = await openStream(app.baseUrl, pair.worker.handle, pair.requester.key, 'tasks/resubscribe', {
        id: taskId,
      });
      expect((await stream.next())!.body.result).toMatchObject({ kind: 'task', id: taskId });
      return stream;
    }
    /** The worker's organization answers, through `app`, what the requester must no longer see. */
    const replyConfidentially = (app: TestApp, pair: Pair, taskId: string) =>
      app
        .http()
        .post(`/api/v1/tasks/${taskId}/reply`)
        .set(bearer(pair.acme))
        .send({ state: 'working', message: { parts: [{ text: 'the confidential answer' }] } })
        .expect(200);

    it('the event stream ends with an api_key_expired error event', async () => {
      const admin = await mintAdminKey(t, acme);
      const stream = await openEventStream(t.baseUrl, apiKey(admin));
      await expire(await selfOf(admin));
      expect(await stream.next()).toMatchObject({ event: 'error', data: { status: 401, code: 'api_key_expired' } });
      expect(await stream.next()).toBeNull();
    });

    it('a protocol stream ends with the refusal (reason api_key_expired) and delivers nothing more', async () => {
      const pair = await agentPair(t);
      const task = await submitTask(t, pair.requester, pair.worker);
      const stream = await subscribed(t, pair, task.id);
      await expire(await selfOf(pair.requester.key));
      await replyConfidentially(t, pair, task.id);
      const rest = await stream.rest();
      expect(rest).toEqual([
        {
          jsonrpc: '2.0',
          id: expect.any(Number),
          error: {
            code: -32000,
            message: expect.any(String),
            data: { reason: 'api_key_expired', status: 401, request_id: expect.any(String) },
          },
        },
      ]);
      expect(JSON.stringify(rest)).not.toContain('confidential');
    });

    it('a protocol stream whose key reaches its expires_at while idle ends, with nothing changed in the database', async () => {
      const pair = await agentPair(t);
      const task = await submitTask(t, pair.requester, pair.worker);
      // The expiry is read as the stream starts; then only time passes.
      await t.db.query(`UPDATE api_keys SET expires_at = now() + interval '1 second' WHERE id = $1`, [
        await selfOf(pair.requester.key),
      ]);
      const stream = await subscribed(t, pair, task.id);
      expect((await stream.rest()).map((event) => event.error?.data?.reason)).toEqual(['api_key_expired']);
    });

    describe('a wake-up the channel announced, after the expiry passed', () => {
      let here: TestApp;
      let other: TestApp;

      beforeAll(async () => {
        // Two more instances on the database, idle re-checks out of the way (15 s): a reply
        // committed on `other` reaches `here`'s streams only on the channel, where it could be vouched for.
        here = await startApp({}, t);
        other = await startApp({}, t);
      });
      afterAll(async () => {
        await other.close();
        await here.close();
      });

      /** Resolves once `here` has heard everything committed so far (every standing change counted). */
      async function settled(): Promise<void> {
        const marker = `marker-${randomUUID()}`;
        const arrived = new Promise<void>((resolve) => {
          const unsubscribe = here.app.get(TaskNotifier).subscribe(marker, () => {
            unsubscribe();
            resolve();
          });
        });
        await t.db.query(`SELECT pg_notify($1, $2)`, [CHANGES_CHANNEL, `${marker}:1`]);
        await arrived;
      }

      it('is not vouched for: the stream asks, and ends with api_key_expired instead of delivering', async () => {
        const pair = await agentPair(t);
        const task = await submitTask(t, pair.requester, pair.worker);
        const id = await selfOf(pair.requester.key);
        await t.db.query(`UPDATE api_keys SET expires_at = now() + interval '1 second' WHERE id = $1`, [id]);
        const [{ expires_at: expiresAt }] = (await t.db.query(`SELECT expires_at FROM api_keys WHERE id = $1`, [
          id,
        ])) as Array<{ expires_at: Date }>;
        await settled();
        const stream = await subscribed(here, pair, task.id);
        // Only time passes: nothing is announced when a key expires.
        await eventually(
          async () => Date.now(),
          (now) => now > expiresAt.getTime() + 100,
        );
        await replyConfidentially(other, pair, task.id);
        const rest = await stream.rest();
        expect(rest.map((event) => event.error?.data?.reason)).toEqual(['api_key_expired']);
        expect(JSON.stringify(rest)).not.toContain('confidential');
      });
    });
  });
});
