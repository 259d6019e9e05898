import { startApp, type TestApp } from '../support/app';
import { agentPair, openStream, reply, rpc, submitTask, v03Message, v1Message, type Agent } from '../support/a2a';
import { apiKey } from '../support/fixtures';

/**
 * The bounds on a task's history (docs/api.md §10, and "Limits (protocol and ledger)" in docs/walkthrough.md): at most
 * LEDGER_MAX_MESSAGES_PER_TASK messages per task, at most LEDGER_MAX_HISTORY of them
 * per read, and a budget of 200 messages per page of tasks.
 */
describe('ledger history limits', () => {
  const MAX_MESSAGES = 6;
  const MAX_HISTORY = 3;
  let t: TestApp;
  let requester: Agent;
  let worker: Agent;

  beforeAll(async () => {
    t = await startApp({ LEDGER_MAX_MESSAGES_PER_TASK: String(MAX_MESSAGES), LEDGER_MAX_HISTORY: String(MAX_HISTORY) });
    ({ requester, worker } = await agentPair(t));
  });
  afterAll(() => t.close());

  const text = (value: string) => ({ parts: [{ kind: 'text', text: value }] });
  const texts = (history: Array<{ parts: Array<{ text: string }> }>) => history.map((m) => m.parts[0].text);
  const messageCount = async (taskId: string) =>
    (
      (await t.db.query(`SELECT count(*)::int AS count FROM messages WHERE task_id = $1`, [taskId])) as Array<{
        count: number;
      }>
    )[0].count;

  /** A task holding `count` messages: the requester's first, then the worker's m1, m2, … */
  async function taskWith(count: number): Promise<string> {
    const task = await submitTask(t, requester, worker, 'm0');
    for (let i = 1; i < count; i++) {
      await reply(t, task.id, worker.key, { message: text(`m${i}`) }).expect(200);
    }
    return task.id;
  }

  describe('messages per task', () => {
    it("the worker's message beyond the limit → 409 task_message_limit; nothing is stored", async () => {
      const id = await taskWith(MAX_MESSAGES);
      const res = await reply(t, id, worker.key, { state: 'working', message: text('one too many') }).expect(409);
      expect(res.body).toMatchObject({
        code: 'task_message_limit',
        detail: expect.stringContaining(`${MAX_MESSAGES} messages`),
      });
      expect(await messageCount(id)).toBe(MAX_MESSAGES);
      // The refused reply changed nothing, not even the state it asked for.
      expect((await t.http().get(`/api/v1/tasks/${id}`).set(apiKey(worker.key)).expect(200)).body.status.state).toBe(
        'submitted',
      );
    });

    it("the requester's message beyond the limit → -32004 in both generations; a retried messageId still returns the task", async () => {
      const id = await taskWith(MAX_MESSAGES);
      const v03 = await rpc(t, worker.handle, requester.key, 'message/send', {
        message: v03Message('more', { taskId: id }),
        configuration: { blocking: false },
      }).expect(200);
      expect(v03.body.error).toMatchObject({
        code: -32004,
        message: expect.stringContaining(`${MAX_MESSAGES} messages`),
      });
      const v1 = await rpc(
        t,
        worker.handle,
        requester.key,
        'SendMessage',
        { message: v1Message('more', { taskId: id }), configuration: { returnImmediately: true } },
        '1.0',
      );
      expect(v1.body.error.code).toBe(-32004);
      const stream = await rpc(t, worker.handle, requester.key, 'message/stream', {
        message: v03Message('more', { taskId: id }),
      }).expect(200);
      expect(stream.body.error.code).toBe(-32004);
      expect(await messageCount(id)).toBe(MAX_MESSAGES);

      const [{ message_id: first }] = await t.db.query(
        `SELECT message_id FROM messages WHERE task_id = $1 AND seq = 1`,
        [id],
      );
      const retried = await rpc(t, worker.handle, requester.key, 'message/send', {
        message: { ...v03Message('m0'), messageId: first, taskId: id },
        configuration: { blocking: false },
      });
      expect(retried.body.result).toMatchObject({ id, status: { state: 'submitted' } });
    });

    it('a full task still changes state: the worker completes it, or the requester cancels it', async () => {
      const done = await taskWith(MAX_MESSAGES);
      await reply(t, done, worker.key, { state: 'completed', artifacts: [{ parts: [{ text: 'result' }] }] }).expect(
        200,
      );
      const canceled = await taskWith(MAX_MESSAGES);
      expect(
        (await rpc(t, worker.handle, requester.key, 'tasks/cancel', { id: canceled })).body.result.status.state,
      ).toBe('canceled');
    });

    it('racing messages at the limit: exactly the room left is used, the rest refused', async () => {
      const id = await taskWith(MAX_MESSAGES - 2);
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) => reply(t, id, worker.key, { message: text(`race ${i}`) })),
      );
      expect(results.map((r) => r.status).sort()).toEqual([200, 200, 409, 409, 409, 409, 409, 409]);
      expect(await messageCount(id)).toBe(MAX_MESSAGES);
    });
  });

  describe('REST reads', () => {
    it('GET /api/v1/tasks/{id}: the latest LEDGER_MAX_HISTORY by default; more → 400', async () => {
      const id = await taskWith(5);
      expect(
        texts((await t.http().get(`/api/v1/tasks/${id}`).set(apiKey(requester.key)).expect(200)).body.history),
      ).toEqual(['m2', 'm3', 'm4']);
      expect(
        texts(
          (await t.http().get(`/api/v1/tasks/${id}?history_length=2`).set(apiKey(requester.key)).expect(200)).body
            .history,
        ),
      ).toEqual(['m3', 'm4']);
      const refused = await t
        .http()
        .get(`/api/v1/tasks/${id}?history_length=${MAX_HISTORY + 1}`)
        .set(apiKey(requester.key))
        .expect(400);
      expect(refused.body).toMatchObject({
        code: 'validation_failed',
        errors: [{ field: 'history_length', message: expect.stringContaining('/messages') }],
      });
      // The whole history is still there, a page at a time.
      const messages = await t
        .http()
        .get(`/api/v1/tasks/${id}/messages?limit=200`)
        .set(apiKey(requester.key))
        .expect(200);
      expect(messages.body.messages).toHaveLength(5);
    });

    it("the reply's response carries the latest LEDGER_MAX_HISTORY", async () => {
      const id = await taskWith(4);
      const res = await reply(t, id, worker.key, { message: text('m4') }).expect(200);
      expect(texts(res.body.history)).toEqual(['m2', 'm3', 'm4']);
    });

    it('GET /api/v1/tasks: one message each by default; history_length × limit at most 200, history_length at most the max', async () => {
      const pair = await agentPair(t);
      const task = await submitTask(t, pair.requester, pair.worker, 'm0');
      for (let i = 1; i < 5; i++) {
        await reply(t, task.id, pair.worker.key, { message: text(`m${i}`) }).expect(200);
      }
      const list = (query: string) => t.http().get(`/api/v1/tasks${query}`).set(apiKey(pair.worker.key));
      expect(texts((await list('').expect(200)).body.tasks[0].history)).toEqual(['m4']);
      expect(texts((await list('?limit=50&history_length=3').expect(200)).body.tasks[0].history)).toEqual([
        'm2',
        'm3',
        'm4',
      ]);
      expect(texts((await list('?limit=100&history_length=2').expect(200)).body.tasks[0].history)).toEqual([
        'm3',
        'm4',
      ]);
      for (const query of [
        '?limit=100&history_length=3',
        '?limit=200&history_length=2',
        `?limit=1&history_length=${MAX_HISTORY + 1}`,
        '?history_length=5',
      ]) {
        const res = await list(query).expect(400);
        expect(res.body).toMatchObject({
          code: 'validation_failed',
          errors: [{ field: 'history_length', message: expect.any(String) }],
        });
      }
    });
  });

  describe('protocol reads (clamped: A2A lets the server return less history)', () => {
    it('get: the latest LEDGER_MAX_HISTORY when absent or when more is asked', async () => {
      const id = await taskWith(5);
      for (const params of [{ id }, { id, historyLength: 1_000_000 }]) {
        expect(texts((await rpc(t, worker.handle, requester.key, 'tasks/get', params)).body.result.history)).toEqual([
          'm2',
          'm3',
          'm4',
        ]);
      }
      const v1 = await rpc(t, worker.handle, requester.key, 'GetTask', { id, historyLength: 2 }, '1.0');
      expect(v1.body.result.history.map((m: { parts: Array<{ text: string }> }) => m.parts[0].text)).toEqual([
        'm3',
        'm4',
      ]);
    });

    it("send, cancel and a stream's first event carry at most LEDGER_MAX_HISTORY", async () => {
      const id = await taskWith(4);
      const sent = await rpc(t, worker.handle, requester.key, 'message/send', {
        message: v03Message('m4', { taskId: id }),
        configuration: { blocking: false, historyLength: 50 },
      });
      expect(texts(sent.body.result.history)).toEqual(['m2', 'm3', 'm4']);
      const stream = await openStream(t.baseUrl, worker.handle, requester.key, 'tasks/resubscribe', { id });
      expect(texts((await stream.next())!.body.result.history)).toEqual(['m2', 'm3', 'm4']);
      stream.close();
      const canceled = await rpc(t, worker.handle, requester.key, 'tasks/cancel', { id });
      expect(texts(canceled.body.result.history)).toEqual(['m2', 'm3', 'm4']);
    });

    it('ListTasks: each task carries at most its share of the 200-message budget', async () => {
      const pair = await agentPair(t);
      const task = await submitTask(t, pair.requester, pair.worker, 'm0');
      for (let i = 1; i < 5; i++) {
        await reply(t, task.id, pair.worker.key, { message: text(`m${i}`) }).expect(200);
      }
      const list = async (params: object) =>
        (await rpc(t, pair.worker.handle, pair.requester.key, 'ListTasks', params, '1.0').expect(200)).body.result
          .tasks[0].history.length;
      expect(await list({ pageSize: 100, historyLength: 50 })).toBe(2);
      expect(await list({ pageSize: 1, historyLength: 50 })).toBe(MAX_HISTORY);
      expect(await list({ pageSize: 1 })).toBe(MAX_HISTORY);
      expect(await list({ pageSize: 1, historyLength: 1 })).toBe(1);
    });
  });
});
