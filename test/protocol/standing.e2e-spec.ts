import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { CHANGES_CHANNEL, STANDING_KEY, TaskNotifier } from '../../src/events/task-notifier';
import { LedgerService } from '../../src/ledger/ledger.service';
import { startApp, type TestApp } from '../support/app';
import { urlFor } from '../support/database';
import { statementsFor } from '../support/statements';
import {
  agentPair,
  openStream,
  rpc,
  startBlocking,
  submitTask,
  v03Message,
  v1Message,
  type Agent,
} from '../support/a2a';
import { apiKey, bearer, type ConsoleAccount } from '../support/fixtures';

/**
 * Calls that stay open (streams, blocking sends) were checked when they started; they
 * re-check the caller's key, both identities and admission each time they wake, and
 * end with the failed check's error rather than deliver anything more.
 */
describe('protocol: open calls lose their standing', () => {
  let t: TestApp;

  beforeAll(async () => {
    // The default keep-alive interval (15 s): within a test, only a wake-up re-checks.
    t = await startApp({ PROTOCOL_BLOCKING_TIMEOUT_MS: '20000' });
  });
  afterAll(() => t.close());

  interface Pair {
    acme: ConsoleAccount;
    requester: Agent;
    worker: Agent;
  }

  /** What changes while the call is open, and what the call must end with. */
  const CHANGES: Array<[string, (pair: Pair) => Promise<unknown>, string, number]> = [
    [
      "the requester's key is revoked",
      ({ requester }) => t.http().post('/api-keys/self/revoke').set(apiKey(requester.key)).expect(200),
      'unauthenticated',
      401,
    ],
    [
      'the requester is disabled',
      ({ requester }) => settings(requester, { enabled: false }),
      'requester_disabled',
      403,
    ],
    [
      'the requester is deleted',
      ({ acme, requester }) => t.http().delete(`/api/v1/identities/${requester.handle}`).set(bearer(acme)).expect(204),
      'unauthenticated',
      401,
    ],
    ['the worker is disabled', ({ worker }) => settings(worker, { enabled: false }), 'worker_not_found', 404],
    [
      'the worker is deleted',
      ({ acme, worker }) => t.http().delete(`/api/v1/identities/${worker.handle}`).set(bearer(acme)).expect(204),
      'worker_not_found',
      404,
    ],
    [
      'the worker blocks the requester',
      ({ acme, requester, worker }) =>
        t
          .http()
          .post('/api/v1/contact-rules')
          .set(bearer(acme))
          .send({
            identity: worker.handle,
            direction: 'inbound',
            action: 'block',
            peer: { type: 'identity', handle: requester.handle },
          })
          .expect(201),
      'admission_denied',
      403,
    ],
    [
      "the requester's key is revoked from the Console (docs/api.md §2: revoke another key)",
      async ({ acme, requester }) => {
        const self = await t.http().get('/api-keys/self').set(apiKey(requester.key)).expect(200);
        await t.http().post(`/api/v1/api-keys/${self.body.id}/revoke`).set(bearer(acme)).expect(200);
      },
      'unauthenticated',
      401,
    ],
  ];

  const settings = (agent: Agent, body: object) =>
    t.http().patch(`/api/v1/identities/${agent.handle}/settings`).set(apiKey(agent.key)).send(body).expect(200);
  /** The worker's organization replies (its own key may be revoked by the change). */
  const workerReplies = (pair: Pair, taskId: string, body: object) =>
    t.http().post(`/api/v1/tasks/${taskId}/reply`).set(bearer(pair.acme)).send(body).expect(200);
  /** A new pair with a task, and the requester subscribed to it (v0.3) through `app`, its first event read. */
  async function subscribed(app = t) {
    const pair = await agentPair(t);
    const task = await submitTask(t, pair.requester, pair.worker);
    const stream = await openStream(app.baseUrl, pair.worker.handle, pair.requester.key, 'tasks/resubscribe', {
      id: task.id,
    });
    expect((await stream.next())!.body.result).toMatchObject({ kind: 'task', id: task.id });
    return { pair, task, stream };
  }
  const refusal = (reason: string, status: number) => ({
    jsonrpc: '2.0',
    id: expect.any(Number),
    error: { code: -32000, message: expect.any(String), data: { reason, status, request_id: expect.any(String) } },
  });

  it.each(CHANGES)(
    "SubscribeToTask, then %s: the worker's reply is not delivered; the stream ends with the error",
    async (_, change, reason, status) => {
      const pair = await agentPair(t);
      const task = await submitTask(t, pair.requester, pair.worker);
      const stream = await openStream(
        t.baseUrl,
        pair.worker.handle,
        pair.requester.key,
        'SubscribeToTask',
        { id: task.id },
        '1.0',
      );
      expect((await stream.next())!.body.result.task).toMatchObject({ id: task.id });
      await change(pair);
      await workerReplies(pair, task.id, {
        state: 'working',
        message: { parts: [{ text: 'the confidential answer' }] },
      });
      expect(await stream.next()).toEqual({ type: 'error', body: refusal(reason, status) });
      expect(await stream.next()).toBeNull();
    },
  );

  it('message/stream (v0.3): a reply after the key is revoked ends the stream with unauthenticated', async () => {
    const pair = await agentPair(t);
    const stream = await openStream(t.baseUrl, pair.worker.handle, pair.requester.key, 'message/stream', {
      message: v03Message('work'),
    });
    const first = (await stream.next())!.body.result;
    await workerReplies(pair, first.id, { state: 'working', message: { parts: [{ text: 'step 1' }] } });
    expect((await stream.next())!.body.result).toMatchObject({ kind: 'status-update', status: { state: 'working' } });
    await CHANGES[0][1](pair);
    await workerReplies(pair, first.id, {
      state: 'completed',
      message: { parts: [{ text: 'the confidential answer' }] },
    });
    expect(await stream.rest()).toEqual([refusal('unauthenticated', 401)]);
  });

  it('a denial found mid-call is not recorded on every wake-up: the decisions log stays as it was', async () => {
    const { pair, task, stream } = await subscribed();
    await CHANGES[5][1](pair);
    await workerReplies(pair, task.id, { state: 'working' });
    expect((await stream.next())!.body.error.data.reason).toBe('admission_denied');
    const [{ count }] = await t.db.query(
      `SELECT count(*)::int AS count FROM admission_decisions WHERE requester_id = $1`,
      [pair.requester.id],
    );
    expect(count).toBe(0);
    // A new call is denied, and recorded, as before.
    const denied = await rpc(t, pair.worker.handle, pair.requester.key, 'tasks/get', { id: task.id }).expect(403);
    expect(denied.body.error.data.reason).toBe('admission_denied');
    const [{ count: after }] = await t.db.query(
      `SELECT count(*)::int AS count FROM admission_decisions WHERE requester_id = $1`,
      [pair.requester.id],
    );
    expect(after).toBe(1);
  });

  it.each(CHANGES)(
    "a blocking send, then %s: it answers with the check's error, not the task",
    async (_, change, reason, status) => {
      const pair = await agentPair(t);
      const blocked = await startBlocking(t, pair.worker, () =>
        rpc(t, pair.worker.handle, pair.requester.key, 'SendMessage', { message: v1Message('block') }, '1.0').then(
          (res) => res,
        ),
      );
      await change(pair);
      await workerReplies(pair, blocked.taskId, {
        state: 'completed',
        message: { parts: [{ text: 'the confidential answer' }] },
      });
      const res = await blocked.response;
      expect(res.status).toBe(status);
      expect(res.body).toEqual(refusal(reason, status));
      expect(JSON.stringify(res.body)).not.toContain('confidential');
    },
  );

  it('calls that keep their standing go on: a stream delivers, a blocking send returns the task', async () => {
    const { pair, task, stream } = await subscribed();
    const other = await agentPair(t, pair.acme);
    // Changes to anyone else leave this call standing.
    await t.http().post('/api-keys/self/revoke').set(apiKey(other.requester.key)).expect(200);
    await settings(other.worker, { enabled: false });
    await workerReplies(pair, task.id, { state: 'completed', message: { parts: [{ text: 'done' }] } });
    expect((await stream.rest()).map((event) => event.result.status.state)).toEqual(['completed']);

    const blocked = await startBlocking(t, pair.worker, () =>
      rpc(t, pair.worker.handle, pair.requester.key, 'message/send', { message: v03Message('block') }).then(
        (res) => res,
      ),
    );
    await t
      .http()
      .post('/api/v1/contact-rules')
      .set(bearer(pair.acme))
      .send({
        identity: other.worker.handle,
        direction: 'inbound',
        action: 'block',
        peer: { type: 'identity', handle: pair.requester.handle },
      })
      .expect(201);
    await workerReplies(pair, blocked.taskId, { state: 'input-required' });
    const res = await blocked.response;
    expect(res.status).toBe(200);
    expect(res.body.result).toMatchObject({ id: blocked.taskId, status: { state: 'input-required' } });
  });

  describe('while idle', () => {
    let idle: TestApp;

    beforeAll(async () => {
      // A second instance on the same database, re-checking every 50 ms while nothing happens.
      idle = await startApp({ SSE_KEEPALIVE_MS: '50', PROTOCOL_BLOCKING_TIMEOUT_MS: '20000' }, t);
    });
    afterAll(() => idle.close());

    it('a stream ends soon after the key is revoked, without waiting for a change', async () => {
      const { pair, stream } = await subscribed(idle);
      await CHANGES[0][1](pair);
      expect(await stream.rest()).toEqual([refusal('unauthenticated', 401)]);
    });

    it('a blocking send answers 403 soon after the requester is disabled, not at its timeout', async () => {
      const pair = await agentPair(t);
      const blocked = await startBlocking(t, pair.worker, () =>
        rpc(idle, pair.worker.handle, pair.requester.key, 'message/send', { message: v03Message('block') }).then(
          (res) => res,
        ),
      );
      await CHANGES[1][1](pair);
      const res = await blocked.response;
      expect(res.body).toEqual(refusal('requester_disabled', 403));
    }, 15_000);
  });
  describe('a wake-up the channel announced, with no standing change since', () => {
    let other: TestApp;
    let listener: Client;
    const heard: string[] = [];

    beforeAll(async () => {
      // A second instance on the same database: a reply committed there reaches this one's streams only on the channel.
      other = await startApp({ PROTOCOL_BLOCKING_TIMEOUT_MS: '20000' }, t);
      listener = new Client({ connectionString: urlFor(t.database) });
      await listener.connect();
      listener.on('notification', (message) => heard.push(message.payload ?? ''));
      await listener.query(`LISTEN ${CHANGES_CHANNEL}`);
    });
    afterAll(async () => {
      await listener.end();
      await other.close();
    });

    /**
     * What the channel announces for `change`: everything heard until a marker sent
     * after it comes back (PostgreSQL delivers in commit order), task changes left out.
     */
    async function announced(change: () => Promise<unknown>): Promise<string[]> {
      await settled();
      heard.length = 0;
      await change();
      await settled();
      return heard.filter((payload) => !payload.startsWith('marker-') && payload.startsWith(`${STANDING_KEY}:`));
    }
    /** Resolves once this suite's listener and `t`'s have heard everything committed so far. */
    async function settled(): Promise<void> {
      const marker = `marker-${randomUUID()}`;
      const notifier = t.app.get(TaskNotifier);
      const arrived = new Promise<void>((resolve) => {
        const unsubscribe = notifier.subscribe(marker, () => {
          unsubscribe();
          resolve();
        });
      });
      const ours = new Promise<void>((resolve) => {
        const check = (message: { payload?: string }) => {
          if (message.payload !== `${marker}:1`) {
            return;
          }
          listener.removeListener('notification', check);
          resolve();
        };
        listener.on('notification', check);
      });
      await t.db.query(`SELECT pg_notify($1, $2)`, [CHANGES_CHANNEL, `${marker}:1`]);
      await Promise.all([arrived, ours]);
    }
    /** The standing reads `app` makes on behalf of requests with `key`, from now on: the key's status, admission's parties. */
    function standingReads(app: TestApp, key: string): () => string[] {
      const stop = statementsFor(app, key);
      return () =>
        stop().flatMap((statement) => {
          if (statement === 'api_key_status') {
            return [statement];
          }
          return /^\s*WITH asked AS/.test(statement) ? ['admission'] : [];
        });
    }

    it("the triggers announce every change to a key's status, an identity or a contact rule (a TRUNCATE too), and nothing else", async () => {
      const pair = await agentPair(t);
      const task = await submitTask(t, pair.requester, pair.worker);
      const rule = {
        identity: pair.worker.handle,
        direction: 'inbound',
        action: 'block',
        peer: { type: 'identity', handle: pair.requester.handle },
      };
      const standing = [`${STANDING_KEY}:0`];
      expect(await announced(() => workerReplies(pair, task.id, { state: 'working' }))).toEqual([]);
      expect(
        await announced(() =>
          t.db.query(`UPDATE api_keys SET last_used_at = now(), status = status WHERE identity_id = $1`, [
            pair.requester.id,
          ]),
        ),
      ).toEqual([]);
      expect(await announced(() => settings(pair.worker, { enabled: false }))).toEqual(standing);
      expect(
        await announced(() => t.db.query(`UPDATE identities SET description = 'x' WHERE id = $1`, [pair.worker.id])),
      ).toEqual(standing);
      let ruleId = '';
      expect(
        await announced(async () => {
          ruleId = (await t.http().post('/api/v1/contact-rules').set(bearer(pair.acme)).send(rule).expect(201)).body.id;
        }),
      ).toEqual(standing);
      expect(await announced(() => t.db.query(`DELETE FROM contact_rules WHERE id = $1`, [ruleId]))).toEqual(standing);
      expect(await announced(() => t.db.query(`TRUNCATE contact_rules`))).toEqual(standing);
      expect(
        await announced(() => t.http().post('/api-keys/self/revoke').set(apiKey(pair.requester.key)).expect(200)),
      ).toEqual(standing);
    });

    /**
     * A pair with a task, subscribed to on `t` once `t` has counted the pair's
     * creation; replies go through `other`, so `t` hears of them only on the channel.
     */
    async function subscribedHere() {
      const pair = await agentPair(t);
      const task = await submitTask(t, pair.requester, pair.worker);
      await settled();
      const stream = await openStream(t.baseUrl, pair.worker.handle, pair.requester.key, 'tasks/resubscribe', {
        id: task.id,
      });
      expect((await stream.next())!.body.result).toMatchObject({ kind: 'task', id: task.id });
      const replyOnOther = (body: object) =>
        other.http().post(`/api/v1/tasks/${task.id}/reply`).set(bearer(pair.acme)).send(body).expect(200);
      return { pair, stream, replyOnOther };
    }

    it('delivers without reading the standing again; a key revoked by a hand-written UPDATE is still refused', async () => {
      const { pair, stream, replyOnOther } = await subscribedHere();
      // Past the stream's catch-up read (which asks nothing either way), a wake-up brings the next change.
      await replyOnOther({ state: 'working' });
      expect((await stream.next())!.body.result).toMatchObject({ kind: 'status-update', status: { state: 'working' } });
      let reads = standingReads(t, pair.requester.key);
      await replyOnOther({ state: 'input-required' });
      expect((await stream.next())!.body.result).toMatchObject({
        kind: 'status-update',
        status: { state: 'input-required' },
      });
      expect(reads()).toEqual([]);

      // No endpoint made this change: the trigger announced it before the reply's change, so the wake-up asks.
      reads = standingReads(t, pair.requester.key);
      await t.db.query(`UPDATE api_keys SET status = 'revoked', revoked_at = now() WHERE identity_id = $1`, [
        pair.requester.id,
      ]);
      await replyOnOther({ state: 'completed', message: { parts: [{ text: 'the confidential answer' }] } });
      expect(await stream.rest()).toEqual([refusal('unauthenticated', 401)]);
      expect(reads().sort()).toEqual(['admission', 'api_key_status']);
    });

    it('an event read past the announced one asks first: a key revoked between the wake-up and its read ends the stream there', async () => {
      const { pair, stream, replyOnOther } = await subscribedHere();
      await replyOnOther({ state: 'working' });
      expect((await stream.next())!.body.result).toMatchObject({ kind: 'status-update', status: { state: 'working' } });
      // The wake-up for `input-required` is vouched for; before its read goes out, the key
      // is revoked and the task completes — a change the read returns, not yet announced.
      const ledger = t.app.get(LedgerService);
      const read = ledger.events.bind(ledger);
      const spy = jest.spyOn(ledger, 'events').mockImplementationOnce(async (...args) => {
        await t.db.query(`UPDATE api_keys SET status = 'revoked', revoked_at = now() WHERE identity_id = $1`, [
          pair.requester.id,
        ]);
        await replyOnOther({ state: 'completed', message: { parts: [{ text: 'the confidential answer' }] } });
        return read(...args);
      });
      try {
        await replyOnOther({ state: 'input-required' });
        const rest = await stream.rest();
        expect(rest).toEqual([
          expect.objectContaining({
            result: expect.objectContaining({ status: expect.objectContaining({ state: 'input-required' }) }),
          }),
          refusal('unauthenticated', 401),
        ]);
        expect(JSON.stringify(rest)).not.toContain('confidential');
        expect(spy).toHaveBeenCalled();
      } finally {
        spy.mockRestore();
      }
    });

    it('a blocking send answers without reading the standing again; a requester disabled by hand is still refused', async () => {
      const send = async (pair: Pair) => {
        const blocked = await startBlocking(t, pair.worker, () =>
          rpc(t, pair.worker.handle, pair.requester.key, 'message/send', { message: v03Message('block') }).then(
            (res) => res,
          ),
        );
        const replyOnOther = (body: object) =>
          other.http().post(`/api/v1/tasks/${blocked.taskId}/reply`).set(bearer(pair.acme)).send(body).expect(200);
        return { ...blocked, replyOnOther };
      };
      const pair = await agentPair(t);
      await settled();
      const standing = await send(pair);
      // Past the send's own read (which asks nothing), the reply's change comes on the channel, vouched for.
      let reads = standingReads(t, pair.requester.key);
      await standing.replyOnOther({ state: 'input-required' });
      const res = await standing.response;
      expect(res.status).toBe(200);
      expect(res.body.result).toMatchObject({ id: standing.taskId, status: { state: 'input-required' } });
      expect(reads()).toEqual([]);

      // No endpoint made this change: the trigger announced it before the reply's change, so the answer asks.
      const refused = await send(pair);
      reads = standingReads(t, pair.requester.key);
      await t.db.query(`UPDATE identities SET enabled = false WHERE id = $1`, [pair.requester.id]);
      await refused.replyOnOther({ state: 'completed', message: { parts: [{ text: 'the confidential answer' }] } });
      const denied = await refused.response;
      expect(denied.body).toEqual(refusal('requester_disabled', 403));
      expect(JSON.stringify(denied.body)).not.toContain('confidential');
      expect(reads().sort()).toEqual(['admission', 'api_key_status']);
    });

    it('an identity disabled by hand ends the stream at its next announced wake-up', async () => {
      const { pair, stream, replyOnOther } = await subscribedHere();
      await t.db.query(`UPDATE identities SET enabled = false WHERE id = $1`, [pair.worker.id]);
      await replyOnOther({ state: 'completed', message: { parts: [{ text: 'the confidential answer' }] } });
      expect(await stream.rest()).toEqual([refusal('worker_not_found', 404)]);
    });
  });
});
