import { randomUUID } from 'node:crypto';
import { startApp, type TestApp } from '../support/app';
import {
  agentPair,
  enabledAgent,
  reply,
  rpc,
  startBlocking,
  submitTask,
  v03Message,
  v1Message,
  type Agent,
} from '../support/a2a';
import {
  apiKey,
  insertIdentity,
  mintAdminKey,
  mintAgentKey,
  mintKeyDirectly,
  signup,
  type ConsoleAccount,
} from '../support/fixtures';

/** `POST /a2a/{handle}` (docs/api.md §5): the checks in order, both A2A generations, every method. */
describe('protocol endpoint', () => {
  let t: TestApp;
  let acme: ConsoleAccount;
  let requester: Agent;
  let worker: Agent;

  beforeAll(async () => {
    t = await startApp({ PROTOCOL_BLOCKING_TIMEOUT_MS: '20000' });
    ({ acme, requester, worker } = await agentPair(t));
  });
  afterAll(() => t.close());

  const get = (id: string, version: '0.3' | '1.0' = '0.3', as = requester, to = worker) =>
    rpc(t, to.handle, as.key, version === '1.0' ? 'GetTask' : 'tasks/get', { id }, version);

  describe('checks, in order, as HTTP errors with a JSON-RPC body and a reason', () => {
    const call = (headers: Record<string, string>, handle = worker.handle) =>
      t
        .http()
        .post(`/a2a/${handle}`)
        .set(headers)
        .send({ jsonrpc: '2.0', id: 'req-1', method: 'tasks/get', params: { id: randomUUID() } });

    const expectRpcError = (res: { status: number; body: any }, status: number, reason: string) => {
      expect(res.status).toBe(status);
      expect(res.body).toEqual({
        jsonrpc: '2.0',
        id: 'req-1',
        error: {
          code: expect.any(Number),
          message: expect.any(String),
          data: { reason, status, request_id: expect.any(String) },
        },
      });
    };

    it('401 unauthenticated: no key, a malformed key, a revoked key', async () => {
      expectRpcError(await call({}), 401, 'unauthenticated');
      expectRpcError(await call(apiKey('a2a_agt_notakeyatall')), 401, 'unauthenticated');
      const revoked = await mintAgentKey(t, acme, requester.id);
      await t.http().post('/api-keys/self/revoke').set(apiKey(revoked)).expect(200);
      expectRpcError(await call(apiKey(revoked)), 401, 'unauthenticated');
    });

    it('403 admin_key_not_allowed: an admin key cannot identify an agent', async () => {
      expectRpcError(await call(apiKey(await mintAdminKey(t, acme))), 403, 'admin_key_not_allowed');
    });

    it("403 identity_unclaimed: the caller's identity is not claimed", async () => {
      const unclaimed = await insertIdentity(t, { organizationId: null });
      expectRpcError(await call(apiKey(await mintKeyDirectly(t, unclaimed.id))), 403, 'identity_unclaimed');
    });

    it("403 requester_disabled: the caller's own receiver is disabled", async () => {
      const disabled = await insertIdentity(t, { organizationId: acme.organizationId, enabled: false });
      expectRpcError(await call(apiKey(await mintAgentKey(t, acme, disabled.id))), 403, 'requester_disabled');
    });

    it('404 worker_not_found: no such handle, or a disabled, unclaimed or deleted worker', async () => {
      const disabled = await insertIdentity(t, { organizationId: acme.organizationId, enabled: false });
      const unclaimed = await insertIdentity(t, { organizationId: null });
      const deleted = await insertIdentity(t, { organizationId: acme.organizationId, enabled: true });
      await t.db.query(`UPDATE identities SET status = 'deleted', deleted_at = now() WHERE id = $1`, [deleted.id]);
      for (const handle of ['no-such-agent', disabled.handle, unclaimed.handle, deleted.handle]) {
        expectRpcError(await call(apiKey(requester.key), handle), 404, 'worker_not_found');
      }
    });

    it('the checks run in order: a revoked key to a missing worker is 401, a disabled caller to a missing worker 403', async () => {
      expectRpcError(await call(apiKey('a2a_agt_notakeyatall'), 'no-such-agent'), 401, 'unauthenticated');
      const disabled = await insertIdentity(t, { organizationId: acme.organizationId, enabled: false });
      expectRpcError(
        await call(apiKey(await mintAgentKey(t, acme, disabled.id)), 'no-such-agent'),
        403,
        'requester_disabled',
      );
    });

    it('a Console session is not a protocol credential', async () => {
      const res = await call({ Authorization: `Bearer ${acme.token}` });
      expectRpcError(res, 403, 'console_session_not_allowed');
    });
  });

  describe('JSON-RPC envelope and versions', () => {
    const post = (body: string | object, headers: Record<string, string> = {}) =>
      t
        .http()
        .post(`/a2a/${worker.handle}`)
        .set(apiKey(requester.key))
        .set(headers)
        .set('Content-Type', 'application/json')
        .send(typeof body === 'string' ? body : JSON.stringify(body));

    it('malformed JSON, or a bare JSON scalar (the body parser is strict) → -32700 (HTTP 400)', async () => {
      for (const body of ['{"jsonrpc": "2.0", ', '"hello"']) {
        const res = await post(body).expect(400);
        expect(res.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
      }
    });

    it.each([
      ['an array (batch)', [{ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: {} }]],
      ['no jsonrpc member', { id: 1, method: 'tasks/get', params: {} }],
      ['jsonrpc 1.0', { jsonrpc: '1.0', id: 1, method: 'tasks/get', params: {} }],
      ['no method', { jsonrpc: '2.0', id: 1, params: {} }],
      ['a numeric method', { jsonrpc: '2.0', id: 1, method: 7, params: {} }],
      ['a fractional id', { jsonrpc: '2.0', id: 1.5, method: 'tasks/get', params: {} }],
    ])('%s → -32600 (HTTP 200)', async (_, body) => {
      const res = await post(JSON.stringify(body)).expect(200);
      expect(res.body).toMatchObject({ jsonrpc: '2.0', error: { code: -32600 } });
    });

    /*
     * The A2A TCK (v0.3, mandatory) sends requests without an id and expects the specific
     * error, with `"id": null`; A2A has no notifications, so a request without an id that
     * is otherwise valid is still refused (-32600) and runs nothing.
     */
    it('no id, or id null: an unknown method -32601, invalid params -32602, with id null; otherwise -32600, nothing run', async () => {
      const tasks = async () =>
        Number((await t.db.query(`SELECT count(*) AS n FROM tasks WHERE worker_identity_id = $1`, [worker.id]))[0].n);
      const before = await tasks();
      const cases: Array<[object, Record<string, string>, number]> = [
        [{ jsonrpc: '2.0', method: 'tasks/explode', params: {} }, {}, -32601],
        [{ jsonrpc: '2.0', id: null, method: 'tasks/explode', params: {} }, {}, -32601],
        [{ jsonrpc: '2.0', method: 'tasks/explode' }, {}, -32601],
        [{ jsonrpc: '2.0', method: 'GetTask', params: { id: randomUUID() } }, {}, -32601],
        [{ jsonrpc: '2.0', method: 'GetTask', params: {} }, { 'A2A-Version': '1.0' }, -32602],
        [{ jsonrpc: '2.0', method: 'message/send' }, {}, -32602],
        [{ jsonrpc: '2.0', id: null, method: 'tasks/get', params: { id: 5 } }, {}, -32602],
        [{ jsonrpc: '2.0', method: 'message/send', params: { message: v03Message('x') } }, {}, -32600],
        [
          { jsonrpc: '2.0', method: 'SendMessage', params: { message: v1Message('x') } },
          { 'A2A-Version': '1.0' },
          -32600,
        ],
        [{ method: 'tasks/explode', params: {} }, {}, -32600],
        [{ jsonrpc: '2.0', params: {} }, {}, -32600],
      ];
      for (const [body, headers, code] of cases) {
        const res = await post(body, headers).expect(200);
        expect([body, res.body]).toEqual([
          body,
          { jsonrpc: '2.0', id: null, error: expect.objectContaining({ code }) },
        ]);
      }
      expect(await tasks()).toBe(before);
    });

    it("unknown methods, and the other generation's names → -32601", async () => {
      expect((await rpc(t, worker.handle, requester.key, 'tasks/explode', {})).body.error.code).toBe(-32601);
      expect((await rpc(t, worker.handle, requester.key, 'GetTask', { id: randomUUID() })).body.error.code).toBe(
        -32601,
      );
      expect(
        (await rpc(t, worker.handle, requester.key, 'tasks/get', { id: randomUUID() }, '1.0')).body.error.code,
      ).toBe(-32601);
      // ListTasks is a v1.0 method; v0.3 has no tasks/list.
      expect((await rpc(t, worker.handle, requester.key, 'tasks/list', {})).body.error.code).toBe(-32601);
    });

    it('missing or malformed params → -32602', async () => {
      const noParams = await post({ jsonrpc: '2.0', id: 9, method: 'message/send' }).expect(200);
      expect(noParams.body).toMatchObject({ id: 9, error: { code: -32602 } });
      const arrayParams = await post(
        { jsonrpc: '2.0', id: 9, method: 'SendMessage', params: [] },
        { 'A2A-Version': '1.0' },
      ).expect(200);
      expect(arrayParams.body.error.code).toBe(-32602);
      // A missing task id is malformed (-32602); an unknown one is not found (-32001).
      expect((await rpc(t, worker.handle, requester.key, 'GetTask', {}, '1.0')).body.error.code).toBe(-32602);
      expect((await rpc(t, worker.handle, requester.key, 'tasks/cancel', { id: ' ' })).body.error.code).toBe(-32602);
      expect((await rpc(t, worker.handle, requester.key, 'SubscribeToTask', {}, '1.0')).body.error.code).toBe(-32602);
    });

    it('cancel of an unknown task id, or of one that is no uuid → -32001', async () => {
      for (const id of ['not-a-uuid', randomUUID()]) {
        expect((await rpc(t, worker.handle, requester.key, 'tasks/cancel', { id })).body.error.code).toBe(-32001);
        expect((await rpc(t, worker.handle, requester.key, 'CancelTask', { id }, '1.0')).body.error.code).toBe(-32001);
      }
    });

    it('A2A-Version other than 1.0 and 0.3 → -32009; absent means 0.3', async () => {
      for (const version of ['2.0', '0.2', 'latest', '1']) {
        const res = await post(
          { jsonrpc: '2.0', id: 3, method: 'GetTask', params: { id: randomUUID() } },
          { 'A2A-Version': version },
        ).expect(200);
        expect(res.body).toMatchObject({ id: 3, error: { code: -32009 } });
      }
      const explicit = await post(
        { jsonrpc: '2.0', id: 4, method: 'tasks/get', params: { id: randomUUID() } },
        { 'A2A-Version': '0.3' },
      ).expect(200);
      expect(explicit.body.error.code).toBe(-32001);
      // A patch number is not considered in negotiation (A2A v1.0 §3.6).
      for (const [version, method] of [
        ['1.0.2', 'GetTask'],
        ['0.3.0', 'tasks/get'],
      ]) {
        const patched = await post(
          { jsonrpc: '2.0', id: 5, method, params: { id: randomUUID() } },
          { 'A2A-Version': version },
        ).expect(200);
        expect(patched.body.error.code).toBe(-32001);
      }
    });

    it('the checks come before the request is read as JSON-RPC; then the version, the envelope, the method, the params', async () => {
      // Wrong in every way the JSON-RPC checks look at: the call's checks (docs/api.md §5) answer first, with its id.
      const everythingWrong = { jsonrpc: '1.0', id: 'req-2', method: 'tasks/explode', params: 5 };
      const unchecked = await t
        .http()
        .post('/a2a/no-such-agent')
        .set({ ...apiKey(requester.key), 'A2A-Version': '9.9' })
        .send(everythingWrong)
        .expect(404);
      expect(unchecked.body).toMatchObject({ id: 'req-2', error: { data: { reason: 'worker_not_found' } } });
      const answers: Array<[object, Record<string, string>, number]> = [
        [everythingWrong, { 'A2A-Version': '9.9' }, -32009],
        [everythingWrong, {}, -32600],
        [{ ...everythingWrong, jsonrpc: '2.0' }, {}, -32601],
        [{ jsonrpc: '2.0', id: 'req-2', method: 'tasks/get', params: 5 }, {}, -32602],
      ];
      for (const [body, headers, code] of answers) {
        const res = await post(body, headers).expect(200);
        expect([body, headers, res.body]).toEqual([
          body,
          headers,
          { jsonrpc: '2.0', id: 'req-2', error: expect.objectContaining({ code }) },
        ]);
      }
    });

    it('a body over 1 MiB → 413 with a JSON-RPC body', async () => {
      const huge = v03Message('x'.repeat(1024 * 1024 + 10));
      const res = await rpc(t, worker.handle, requester.key, 'message/send', { message: huge }).expect(413);
      expect(res.body.error.data.reason).toBe('payload_too_large');
    });
  });

  describe('send', () => {
    it('without taskId: a new task, submitted, the message in its history, in a new context (v0.3 spelling)', async () => {
      const message = v03Message('summarize Q3');
      const res = await rpc(t, worker.handle, requester.key, 'message/send', {
        message,
        configuration: { blocking: false },
      }).expect(200);
      expect(res.body.result).toEqual({
        kind: 'task',
        id: expect.any(String),
        contextId: expect.any(String),
        status: { state: 'submitted', timestamp: expect.any(String) },
        history: [{ ...message, taskId: res.body.result.id, contextId: res.body.result.contextId }],
      });
      const [row] = await t.db.query(`SELECT requester_identity_id, worker_identity_id FROM tasks WHERE id = $1`, [
        res.body.result.id,
      ]);
      expect(row).toEqual({ requester_identity_id: requester.id, worker_identity_id: worker.id });
    });

    it('v1.0 spelling: TASK_STATE_… and v1.0 parts', async () => {
      const message = v1Message('hello', {
        parts: [
          { text: 'hello' },
          { data: { n: 1 } },
          { url: 'https://example.test/a.pdf', mediaType: 'application/pdf' },
        ],
      });
      const res = await rpc(
        t,
        worker.handle,
        requester.key,
        'SendMessage',
        { message, configuration: { returnImmediately: true } },
        '1.0',
      ).expect(200);
      expect(res.body.result.task).toMatchObject({
        status: { state: 'TASK_STATE_SUBMITTED' },
        history: [{ messageId: message.messageId, role: 'ROLE_USER', parts: message.parts }],
      });
      const v03 = await get(res.body.result.task.id);
      expect(v03.body.result.history[0].parts).toEqual([
        { kind: 'text', text: 'hello' },
        { kind: 'data', data: { n: 1 } },
        { kind: 'file', file: { uri: 'https://example.test/a.pdf', mimeType: 'application/pdf' } },
      ]);
    });

    it('continues a task; an interrupted task goes back to submitted', async () => {
      const task = await submitTask(t, requester, worker);
      await reply(t, task.id, worker.key, {
        state: 'input-required',
        message: { parts: [{ kind: 'text', text: 'which quarter?' }] },
      }).expect(200);
      const follow = v03Message('Q3', { taskId: task.id, contextId: task.contextId });
      const res = await rpc(t, worker.handle, requester.key, 'message/send', {
        message: follow,
        configuration: { blocking: false },
      }).expect(200);
      expect(res.body.result.status.state).toBe('submitted');
      expect(res.body.result.history.map((m: { role: string }) => m.role)).toEqual(['user', 'agent', 'user']);
    });

    it('an auth-required task goes back to submitted too', async () => {
      const task = await submitTask(t, requester, worker);
      await reply(t, task.id, worker.key, { state: 'auth-required' }).expect(200);
      const res = await rpc(t, worker.handle, requester.key, 'message/send', {
        message: v03Message('token sent', { taskId: task.id }),
        configuration: { blocking: false },
      });
      expect(res.body.result.status.state).toBe('submitted');
    });

    it('a repeated messageId returns the task as it is, on an interrupted and then a terminal task', async () => {
      const task = await submitTask(t, requester, worker);
      const repeated = v03Message('once', { taskId: task.id });
      await rpc(t, worker.handle, requester.key, 'message/send', {
        message: repeated,
        configuration: { blocking: false },
      }).expect(200);
      await reply(t, task.id, worker.key, { state: 'input-required' }).expect(200);
      const count = async () =>
        (await t.db.query(`SELECT count(*)::int AS count FROM messages WHERE task_id = $1`, [task.id]))[0].count;
      const stored = await count();
      // Blocking by default (v0.3): a repeat is not new work, so it answers at once.
      const interrupted = await rpc(t, worker.handle, requester.key, 'message/send', { message: repeated }).expect(200);
      expect(interrupted.body.result.status.state).toBe('input-required');
      await reply(t, task.id, worker.key, { state: 'completed' }).expect(200);
      const terminal = await rpc(t, worker.handle, requester.key, 'message/send', {
        message: repeated,
        configuration: { blocking: false },
      }).expect(200);
      expect(terminal.body.error).toBeUndefined();
      expect(terminal.body.result.status.state).toBe('completed');
      expect(await count()).toBe(stored);
    });

    it('a message to a working task keeps it working', async () => {
      const task = await submitTask(t, requester, worker);
      await reply(t, task.id, worker.key, { state: 'working' }).expect(200);
      const res = await rpc(t, worker.handle, requester.key, 'message/send', {
        message: v03Message('more', { taskId: task.id }),
        configuration: { blocking: false },
      });
      expect(res.body.result).toMatchObject({ status: { state: 'working' } });
      expect(res.body.result.history).toHaveLength(2);
    });

    it('a terminal task refuses messages: -32004', async () => {
      const task = await submitTask(t, requester, worker);
      await reply(t, task.id, worker.key, { state: 'completed' }).expect(200);
      const res = await rpc(t, worker.handle, requester.key, 'message/send', {
        message: v03Message('again', { taskId: task.id }),
      });
      expect(res.body.error.code).toBe(-32004);
      const v1 = await rpc(
        t,
        worker.handle,
        requester.key,
        'SendMessage',
        { message: v1Message('again', { taskId: task.id }) },
        '1.0',
      );
      expect(v1.body.error.code).toBe(-32004);
    });

    it('a repeated messageId is not stored twice (continuing, and creating)', async () => {
      const task = await submitTask(t, requester, worker);
      const again = v03Message('once', { taskId: task.id });
      for (let i = 0; i < 3; i++) {
        await rpc(t, worker.handle, requester.key, 'message/send', {
          message: again,
          configuration: { blocking: false },
        }).expect(200);
      }
      const [{ count }] = await t.db.query(`SELECT count(*)::int AS count FROM messages WHERE task_id = $1`, [task.id]);
      expect(count).toBe(2);

      const creating = v03Message('create once');
      const first = await rpc(t, worker.handle, requester.key, 'message/send', {
        message: creating,
        configuration: { blocking: false },
      });
      const second = await rpc(t, worker.handle, requester.key, 'message/send', {
        message: creating,
        configuration: { blocking: false },
      });
      expect(second.body.result.id).toBe(first.body.result.id);
      expect(second.body.result.history).toHaveLength(1);
    });

    it('a contextId must be a context of this requester and worker: -32602 otherwise', async () => {
      const task = await submitTask(t, requester, worker);
      const same = await rpc(t, worker.handle, requester.key, 'message/send', {
        message: v03Message('next topic', { contextId: task.contextId }),
        configuration: { blocking: false },
      });
      expect(same.body.result).toMatchObject({ contextId: task.contextId });
      expect(same.body.result.id).not.toBe(task.id);

      const otherWorker = await enabledAgent(t, acme);
      for (const contextId of [randomUUID(), 'not-a-uuid']) {
        const res = await rpc(t, worker.handle, requester.key, 'message/send', {
          message: v03Message('x', { contextId }),
        });
        expect(res.body.error.code).toBe(-32602);
      }
      const foreign = await rpc(t, otherWorker.handle, requester.key, 'message/send', {
        message: v03Message('x', { contextId: task.contextId }),
      });
      expect(foreign.body.error.code).toBe(-32602);
      const mismatch = await rpc(t, worker.handle, requester.key, 'message/send', {
        message: v03Message('x', {
          taskId: task.id,
          contextId: same.body.result.contextId === task.contextId ? randomUUID() : task.contextId,
        }),
      });
      expect(mismatch.body.error.code).toBe(-32602);
    });

    it('a contextId in upper case names the same context (a uuid, as PostgreSQL reads it): for a new task and a next turn', async () => {
      const task = await submitTask(t, requester, worker);
      const upper = task.contextId.toUpperCase();
      const started = await rpc(t, worker.handle, requester.key, 'message/send', {
        message: v03Message('same thread', { contextId: upper }),
        configuration: { blocking: false },
      });
      expect(started.body.result).toMatchObject({ contextId: task.contextId });
      const next = await rpc(t, worker.handle, requester.key, 'message/send', {
        message: v03Message('and more', { taskId: task.id, contextId: upper }),
        configuration: { blocking: false },
      });
      expect(next.body.error).toBeUndefined();
      expect(next.body.result).toMatchObject({ id: task.id, contextId: task.contextId });
    });

    it.each([
      ['no parts', { parts: [] }],
      ['101 parts', { parts: Array.from({ length: 101 }, () => ({ kind: 'text', text: 'x' })) }],
      ['the agent role', { role: 'agent' }],
      ['no messageId', { messageId: '' }],
      ['an unknown part kind', { parts: [{ kind: 'video', text: 'x' }] }],
    ])('refuses a message with %s: -32602', async (_, override) => {
      const res = await rpc(t, worker.handle, requester.key, 'message/send', {
        message: { ...v03Message('x'), ...override },
      });
      expect(res.body.error.code).toBe(-32602);
    });

    it('a v1.0 message needs a part with content and the user role: -32602', async () => {
      for (const message of [
        v1Message('x', { parts: [{ mediaType: 'text/plain' }] }),
        v1Message('x', { role: 'ROLE_AGENT' }),
        { parts: [{ text: 'x' }] },
      ]) {
        const res = await rpc(t, worker.handle, requester.key, 'SendMessage', { message }, '1.0');
        expect(res.body.error.code).toBe(-32602);
      }
    });

    it('a taskId of another pair, or no task at all: -32001', async () => {
      const task = await submitTask(t, requester, worker);
      const other = await enabledAgent(t, acme);
      for (const [as, to, id] of [
        [other, worker, task.id],
        [requester, other, task.id],
        [requester, worker, randomUUID()],
        [requester, worker, 'nope'],
      ] as const) {
        const res = await rpc(t, to.handle, as.key, 'message/send', { message: v03Message('x', { taskId: id }) });
        expect(res.body.error.code).toBe(-32001);
      }
    });
  });

  describe('blocking sends', () => {
    it("v0.3 blocks unless blocking is false; v1.0 unless returnImmediately — and wake on the worker's reply", async () => {
      const v03 = await startBlocking(t, worker, () =>
        rpc(t, worker.handle, requester.key, 'message/send', { message: v03Message('block') }),
      );
      await reply(t, v03.taskId, worker.key, {
        state: 'completed',
        message: { parts: [{ kind: 'text', text: 'done' }] },
      }).expect(200);
      expect((await v03.response).body.result).toMatchObject({
        id: v03.taskId,
        status: { state: 'completed', message: { role: 'agent', parts: [{ kind: 'text', text: 'done' }] } },
      });

      const v1 = await startBlocking(t, worker, () =>
        rpc(t, worker.handle, requester.key, 'SendMessage', { message: v1Message('block v1') }, '1.0'),
      );
      await reply(t, v1.taskId, worker.key, { state: 'input-required' }).expect(200);
      expect((await v1.response).body.result.task).toMatchObject({
        id: v1.taskId,
        status: { state: 'TASK_STATE_INPUT_REQUIRED' },
      });
    });

    it('returns the task as it is after PROTOCOL_BLOCKING_TIMEOUT_MS', async () => {
      const impatient = await startApp({ PROTOCOL_BLOCKING_TIMEOUT_MS: '200' }, t);
      try {
        const res = await rpc(impatient, worker.handle, requester.key, 'message/send', {
          message: v03Message('nobody answers'),
        }).expect(200);
        expect(res.body.result.status.state).toBe('submitted');
        const working = await submitTask(t, requester, worker);
        await reply(t, working.id, worker.key, { state: 'working' }).expect(200);
        const still = await rpc(impatient, worker.handle, requester.key, 'message/send', {
          message: v03Message('and?', { taskId: working.id }),
        });
        expect(still.body.result.status.state).toBe('working');
      } finally {
        await impatient.close();
      }
    });

    it('returns at once with blocking false or returnImmediately', async () => {
      const v03 = await rpc(t, worker.handle, requester.key, 'message/send', {
        message: v03Message('x'),
        configuration: { blocking: false },
      });
      expect(v03.body.result.status.state).toBe('submitted');
      const v1 = await rpc(
        t,
        worker.handle,
        requester.key,
        'SendMessage',
        { message: v1Message('x'), configuration: { returnImmediately: true } },
        '1.0',
      );
      expect(v1.body.result.task.status.state).toBe('TASK_STATE_SUBMITTED');
    });
  });

  describe('get, list, cancel', () => {
    it('get honours historyLength (0, n, all); a negative one is -32602', async () => {
      const task = await submitTask(t, requester, worker);
      await reply(t, task.id, worker.key, {
        state: 'input-required',
        message: { parts: [{ kind: 'text', text: 'q1' }] },
      }).expect(200);
      await rpc(t, worker.handle, requester.key, 'message/send', {
        message: v03Message('a1', { taskId: task.id }),
        configuration: { blocking: false },
      });
      const all = await get(task.id);
      expect(all.body.result.history.map((m: any) => m.parts[0].text)).toEqual(['please do the thing', 'q1', 'a1']);
      const two = await rpc(t, worker.handle, requester.key, 'tasks/get', { id: task.id, historyLength: 2 });
      expect(two.body.result.history.map((m: any) => m.parts[0].text)).toEqual(['q1', 'a1']);
      const none = await rpc(t, worker.handle, requester.key, 'GetTask', { id: task.id, historyLength: 0 }, '1.0');
      expect(none.body.result.history).toBeUndefined();
      expect(
        (await rpc(t, worker.handle, requester.key, 'GetTask', { id: task.id, historyLength: -1 }, '1.0')).body.error
          .code,
      ).toBe(-32602);
    });

    it('ListTasks: this requester\'s tasks with this worker, paginated; nextPageToken "" on the last page', async () => {
      const pair = await agentPair(t);
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        ids.push((await submitTask(t, pair.requester, pair.worker)).id);
      }
      await submitTask(t, pair.worker, pair.requester); // the other direction is another pair
      const seen: string[] = [];
      let pageToken = '';
      for (let page = 0; page < 5; page++) {
        const res = await rpc(
          t,
          pair.worker.handle,
          pair.requester.key,
          'ListTasks',
          { pageSize: 2, pageToken },
          '1.0',
        ).expect(200);
        expect(res.body.result).toMatchObject({ pageSize: 2, totalSize: 5 });
        seen.push(...res.body.result.tasks.map((task: { id: string }) => task.id));
        pageToken = res.body.result.nextPageToken;
        if (pageToken === '') {
          break;
        }
      }
      expect(seen).toEqual([...ids].reverse());
      await reply(t, ids[0], pair.worker.key, { state: 'completed' }).expect(200);
      const completed = await rpc(
        t,
        pair.worker.handle,
        pair.requester.key,
        'ListTasks',
        { status: 'TASK_STATE_COMPLETED' },
        '1.0',
      );
      expect(completed.body.result.tasks.map((task: { id: string }) => task.id)).toEqual([ids[0]]);
      expect(completed.body.result.nextPageToken).toBe('');
      for (const params of [{ pageSize: 0 }, { pageSize: 101 }, { pageToken: 'garbage' }]) {
        expect((await rpc(t, pair.worker.handle, pair.requester.key, 'ListTasks', params, '1.0')).body.error.code).toBe(
          -32602,
        );
      }
    });

    it('ListTasks omits artifacts entirely unless includeArtifacts (v1.0 §3.1.4)', async () => {
      const pair = await agentPair(t);
      const task = await submitTask(t, pair.requester, pair.worker);
      await reply(t, task.id, pair.worker.key, {
        artifacts: [{ artifactId: 'a1', parts: [{ kind: 'text', text: 'x' }] }],
      }).expect(200);
      const without = await rpc(t, pair.worker.handle, pair.requester.key, 'ListTasks', {}, '1.0');
      expect(without.body.result.tasks).toHaveLength(1);
      expect(without.body.result.tasks[0]).not.toHaveProperty('artifacts');
      const withArtifacts = await rpc(
        t,
        pair.worker.handle,
        pair.requester.key,
        'ListTasks',
        { includeArtifacts: true },
        '1.0',
      );
      expect(withArtifacts.body.result.tasks[0].artifacts).toEqual([expect.objectContaining({ artifactId: 'a1' })]);
    });

    it('cancel: non-terminal → canceled; canceled → the task in v1.0 and -32002 in v0.3; other terminal → -32002', async () => {
      const task = await submitTask(t, requester, worker);
      const canceled = await rpc(t, worker.handle, requester.key, 'tasks/cancel', { id: task.id });
      expect(canceled.body.result.status.state).toBe('canceled');
      const again = await rpc(t, worker.handle, requester.key, 'CancelTask', { id: task.id }, '1.0');
      expect(again.body.result.status.state).toBe('TASK_STATE_CANCELED');
      const v03Again = await rpc(t, worker.handle, requester.key, 'tasks/cancel', { id: task.id });
      expect(v03Again.body.error).toMatchObject({ code: -32002, message: expect.stringContaining('canceled') });
      await reply(t, task.id, worker.key, { state: 'working' }).expect(409);

      for (const state of ['completed', 'failed', 'rejected']) {
        const done = await submitTask(t, requester, worker);
        await reply(t, done.id, worker.key, { state }).expect(200);
        expect((await rpc(t, worker.handle, requester.key, 'tasks/cancel', { id: done.id })).body.error.code).toBe(
          -32002,
        );
      }
      for (const state of ['working', 'input-required', 'auth-required']) {
        const open = await submitTask(t, requester, worker);
        await reply(t, open.id, worker.key, { state }).expect(200);
        expect(
          (await rpc(t, worker.handle, requester.key, 'tasks/cancel', { id: open.id })).body.result.status.state,
        ).toBe('canceled');
      }
    });

    it('only the pair sees a task: a third identity, another organization, the wrong worker handle → -32001', async () => {
      const task = await submitTask(t, requester, worker);
      const third = await enabledAgent(t, acme);
      // Admitted (the worker is public, the foreign caller has public egress), so the call reaches the method.
      const foreign = await enabledAgent(t, await signup(t), { allowPublicEgress: true });
      await t.db.query(`UPDATE identities SET publicly_discoverable = true WHERE id = $1`, [worker.id]);
      const cases: Array<[Agent, Agent]> = [
        [third, worker],
        [foreign, worker],
        [requester, third],
        [worker, requester],
      ];
      for (const [as, to] of cases) {
        for (const [method, params, version] of [
          ['tasks/get', { id: task.id }, '0.3'],
          ['GetTask', { id: task.id }, '1.0'],
          ['tasks/cancel', { id: task.id }, '0.3'],
          ['tasks/pushNotificationConfig/list', { id: task.id }, '0.3'],
        ] as const) {
          const res = await rpc(t, to.handle, as.key, method, params, version).expect(200);
          expect(res.body.error.code).toBe(-32001);
        }
      }
      expect((await get(task.id)).body.result.status.state).toBe('submitted');
    });
  });

  describe('push notification configs', () => {
    const config = (id?: string) => ({ url: 'https://hooks.example.test/a2a', token: 'tok', ...(id ? { id } : {}) });

    it('create, get, list, delete — both generations, owned by the requester', async () => {
      const task = await submitTask(t, requester, worker);
      const set = await rpc(t, worker.handle, requester.key, 'tasks/pushNotificationConfig/set', {
        taskId: task.id,
        pushNotificationConfig: { ...config('c1'), authentication: { schemes: ['Bearer'], credentials: 'secret' } },
      });
      expect(set.body.result).toEqual({
        taskId: task.id,
        pushNotificationConfig: {
          id: 'c1',
          url: 'https://hooks.example.test/a2a',
          token: 'tok',
          authentication: { schemes: ['Bearer'], credentials: 'secret' },
        },
      });
      const created = await rpc(
        t,
        worker.handle,
        requester.key,
        'CreateTaskPushNotificationConfig',
        { taskId: task.id, url: 'https://hooks.example.test/v1' },
        '1.0',
      );
      expect(created.body.result).toMatchObject({
        taskId: task.id,
        id: expect.any(String),
        url: 'https://hooks.example.test/v1',
      });

      const one = await rpc(
        t,
        worker.handle,
        requester.key,
        'GetTaskPushNotificationConfig',
        { taskId: task.id, id: 'c1' },
        '1.0',
      );
      expect(one.body.result).toMatchObject({ id: 'c1', authentication: { scheme: 'Bearer' } });
      const listed = await rpc(t, worker.handle, requester.key, 'tasks/pushNotificationConfig/list', { id: task.id });
      expect(listed.body.result.map((c: any) => c.pushNotificationConfig.id).sort()).toEqual(
        ['c1', created.body.result.id].sort(),
      );
      const v1List = await rpc(
        t,
        worker.handle,
        requester.key,
        'ListTaskPushNotificationConfigs',
        { taskId: task.id },
        '1.0',
      );
      expect(v1List.body.result).toMatchObject({ configs: expect.any(Array) });
      expect(v1List.body.result.configs).toHaveLength(2);

      const deleted = await rpc(t, worker.handle, requester.key, 'tasks/pushNotificationConfig/delete', {
        id: task.id,
        pushNotificationConfigId: 'c1',
      });
      expect(deleted.body).toMatchObject({ result: null });
      const gone = await rpc(t, worker.handle, requester.key, 'tasks/pushNotificationConfig/get', {
        id: task.id,
        pushNotificationConfigId: 'c1',
      });
      expect(gone.body.error.code).toBe(-32001);
      const [{ version }] = await t.db.query(
        `SELECT protocol_version AS version FROM push_notification_configs WHERE task_id = $1`,
        [task.id],
      );
      expect(version).toBe('1.0');
    });

    it('the token and credentials are shown only in the response that set them; get and list mask them', async () => {
      const task = await submitTask(t, requester, worker);
      const secret = {
        url: 'https://hooks.example.test/a2a',
        token: 'tok-secret',
        authentication: { schemes: ['Bearer'], credentials: 'cred-secret' },
      };
      const set = await rpc(t, worker.handle, requester.key, 'tasks/pushNotificationConfig/set', {
        taskId: task.id,
        pushNotificationConfig: { ...secret, id: 'c1' },
      });
      expect(set.body.result.pushNotificationConfig).toEqual({ ...secret, id: 'c1' });
      const created = await rpc(
        t,
        worker.handle,
        requester.key,
        'CreateTaskPushNotificationConfig',
        {
          taskId: task.id,
          id: 'c2',
          url: secret.url,
          token: 'tok-secret',
          authentication: { scheme: 'Basic', credentials: 'cred-secret' },
        },
        '1.0',
      );
      expect(created.body.result).toMatchObject({
        token: 'tok-secret',
        authentication: { scheme: 'Basic', credentials: 'cred-secret' },
      });

      const reads = [
        await rpc(t, worker.handle, requester.key, 'tasks/pushNotificationConfig/get', {
          id: task.id,
          pushNotificationConfigId: 'c1',
        }),
        await rpc(t, worker.handle, requester.key, 'tasks/pushNotificationConfig/get', { id: task.id }),
        await rpc(t, worker.handle, requester.key, 'tasks/pushNotificationConfig/list', { id: task.id }),
        await rpc(
          t,
          worker.handle,
          requester.key,
          'GetTaskPushNotificationConfig',
          { taskId: task.id, id: 'c2' },
          '1.0',
        ),
        await rpc(t, worker.handle, requester.key, 'ListTaskPushNotificationConfigs', { taskId: task.id }, '1.0'),
      ];
      for (const read of reads) {
        expect(read.body.result).toBeDefined();
        expect(JSON.stringify(read.body)).not.toMatch(/secret/);
      }
      expect(reads[0].body.result).toEqual({
        taskId: task.id,
        pushNotificationConfig: { id: 'c1', url: secret.url, authentication: { schemes: ['Bearer'] } },
      });
      expect(reads[3].body.result).toEqual({
        taskId: task.id,
        id: 'c2',
        url: secret.url,
        authentication: { scheme: 'Basic' },
      });
      expect(reads[4].body.result.configs).toHaveLength(2);
      // Stored as set: push notifications are sent with them.
      const rows = await t.db.query(
        `SELECT token, authentication FROM push_notification_configs WHERE task_id = $1 ORDER BY config_id`,
        [task.id],
      );
      expect(rows).toEqual([
        { token: 'tok-secret', authentication: { scheme: 'Bearer', credentials: 'cred-secret' } },
        { token: 'tok-secret', authentication: { scheme: 'Basic', credentials: 'cred-secret' } },
      ]);
    });

    it('a missing config on an existing task: TaskNotFoundError (-32001), the error both specs give (v1.0 §3.1.8), naming the config', async () => {
      const task = await submitTask(t, requester, worker);
      for (const res of [
        await rpc(t, worker.handle, requester.key, 'tasks/pushNotificationConfig/get', {
          id: task.id,
          pushNotificationConfigId: 'nope',
        }),
        await rpc(t, worker.handle, requester.key, 'tasks/pushNotificationConfig/get', { id: task.id }),
        await rpc(
          t,
          worker.handle,
          requester.key,
          'GetTaskPushNotificationConfig',
          { taskId: task.id, id: 'nope' },
          '1.0',
        ),
      ]) {
        expect(res.body.error).toMatchObject({
          code: -32001,
          message: expect.stringMatching(/push notification config/),
        });
      }
      // Delete is idempotent (v1.0 §3.1.10): a config that is not there is deleted already.
      for (let i = 0; i < 2; i++) {
        expect(
          (
            await rpc(
              t,
              worker.handle,
              requester.key,
              'DeleteTaskPushNotificationConfig',
              { taskId: task.id, id: 'nope' },
              '1.0',
            )
          ).body,
        ).toMatchObject({ result: {} });
      }
      const noTask = await rpc(
        t,
        worker.handle,
        requester.key,
        'GetTaskPushNotificationConfig',
        { taskId: randomUUID(), id: 'nope' },
        '1.0',
      );
      expect(noTask.body.error).toMatchObject({
        code: -32001,
        message: expect.not.stringMatching(/push notification config/),
      });
    });

    it('a send may carry one; at most 10 per task; https only', async () => {
      const res = await rpc(t, worker.handle, requester.key, 'message/send', {
        message: v03Message('with push'),
        configuration: { blocking: false, pushNotificationConfig: config('from-send') },
      });
      const taskId = res.body.result.id;
      const [row] = await t.db.query(
        `SELECT config_id, owner_identity_id, protocol_version FROM push_notification_configs WHERE task_id = $1`,
        [taskId],
      );
      expect(row).toEqual({ config_id: 'from-send', owner_identity_id: requester.id, protocol_version: '0.3' });
      for (let i = 0; i < 9; i++) {
        await rpc(t, worker.handle, requester.key, 'tasks/pushNotificationConfig/set', {
          taskId,
          pushNotificationConfig: config(`c${i}`),
        }).expect(200);
      }
      const eleventh = await rpc(t, worker.handle, requester.key, 'tasks/pushNotificationConfig/set', {
        taskId,
        pushNotificationConfig: config('c10'),
      });
      expect(eleventh.body.error.code).toBe(-32602);
      const replaced = await rpc(t, worker.handle, requester.key, 'tasks/pushNotificationConfig/set', {
        taskId,
        pushNotificationConfig: { ...config('c1'), url: 'https://hooks.example.test/other' },
      });
      expect(replaced.body.result.pushNotificationConfig.url).toBe('https://hooks.example.test/other');
      for (const url of ['http://hooks.example.test/a2a', 'not a url', 'https://user:pw@hooks.example.test/']) {
        const bad = await rpc(t, worker.handle, requester.key, 'tasks/pushNotificationConfig/set', {
          taskId: (await submitTask(t, requester, worker)).id,
          pushNotificationConfig: { url },
        });
        expect(bad.body.error.code).toBe(-32602);
      }
    });
  });
});
