import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { LOGGER } from '../../src/common/tokens';
import { startApp, type TestApp } from '../support/app';
import { agentPair, rpc, submitTask, v03Message, v1Message, type A2AVersion, type Agent } from '../support/a2a';

/**
 * CONTRACT §5: params of the wrong type, or a missing required member, are -32602 with
 * a message naming the member — never -32603, never an internal exception's text, never
 * an error-level log line. Both generations; the cases an outside tester found first.
 */
describe('protocol params of the wrong type', () => {
  let t: TestApp;
  let requester: Agent;
  let worker: Agent;
  let taskId: string;
  let logger: Logger;

  beforeAll(async () => {
    t = await startApp();
    ({ requester, worker } = await agentPair(t));
    taskId = (await submitTask(t, requester, worker)).id;
    logger = t.app.get(LOGGER);
  });
  afterAll(() => t.close());
  afterEach(() => jest.restoreAllMocks());

  const HOOK = 'https://example.test/hook';
  const TASK = '<task>';
  const withTask = (value: unknown): unknown =>
    value === TASK ? taskId : Array.isArray(value) ? value.map(withTask)
      : value && typeof value === 'object' ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withTask(v)])) : value;

  const v03 = (extra: Record<string, unknown>, message: Record<string, unknown> = {}) => ({ message: v03Message('x', message), ...extra });
  const v1 = (extra: Record<string, unknown>, message: Record<string, unknown> = {}) => ({ message: v1Message('x', message), ...extra });

  const CASES: Array<[A2AVersion, string, unknown, string]> = [
    ['0.3', 'tasks/get', { id: 5 }, 'params.id'],
    ['0.3', 'tasks/get', { id: [] }, 'params.id'],
    ['0.3', 'tasks/get', { id: TASK, historyLength: '2' }, 'params.historyLength'],
    ['0.3', 'tasks/cancel', { id: 5 }, 'params.id'],
    ['0.3', 'tasks/cancel', { taskId: 5 }, 'params.id'],
    ['0.3', 'tasks/resubscribe', { id: 5 }, 'params.id'],
    ['0.3', 'tasks/pushNotificationConfig/set', { taskId: 5, pushNotificationConfig: { url: HOOK } }, 'params.taskId'],
    ['0.3', 'tasks/pushNotificationConfig/set', { taskId: TASK }, 'params.pushNotificationConfig'],
    ['0.3', 'tasks/pushNotificationConfig/set', { taskId: TASK, pushNotificationConfig: { url: HOOK, authentication: { schemes: 'Bearer' } } },
      'params.pushNotificationConfig.authentication.schemes'],
    ['0.3', 'tasks/pushNotificationConfig/get', { id: 5 }, 'params.id'],
    ['0.3', 'tasks/pushNotificationConfig/delete', { id: TASK, pushNotificationConfigId: 5 }, 'params.pushNotificationConfigId'],
    ['0.3', 'message/send', { message: 'hello' }, 'params.message'],
    ['0.3', 'message/send', v03({}, { referenceTaskIds: 5 }), 'params.message.referenceTaskIds'],
    ['0.3', 'message/send', v03({}, { extensions: 5 }), 'params.message.extensions'],
    ['0.3', 'message/send', v03({}, { parts: [{ kind: 'file', file: null }] }), 'params.message.parts[0] file'],
    ['0.3', 'message/send', v03({}, { parts: [{ kind: 'text', text: 5 }] }), 'params.message.parts[0] text'],
    ['0.3', 'message/send', v03({}, { parts: [null] }), 'params.message.parts[0]'],
    ['0.3', 'message/send', v03({ configuration: { pushNotificationConfig: { url: HOOK, authentication: { schemes: 'Bearer' } } } }),
      'params.configuration.pushNotificationConfig.authentication.schemes'],
    ['0.3', 'message/stream', v03({}, { parts: [{ kind: 'data', data: [1] }] }), 'params.message.parts[0] data'],
    ['1.0', 'GetTask', { id: 5 }, 'params.id'],
    ['1.0', 'GetTask', { id: [] }, 'params.id'],
    ['1.0', 'CancelTask', { id: 5 }, 'params.id'],
    ['1.0', 'SubscribeToTask', { id: 5 }, 'params.id'],
    ['1.0', 'CreateTaskPushNotificationConfig', { taskId: 5, url: HOOK }, 'params.taskId'],
    ['1.0', 'CreateTaskPushNotificationConfig', { taskId: TASK }, 'params.url'],
    ['1.0', 'CreateTaskPushNotificationConfig', { taskId: TASK, url: HOOK, authentication: { scheme: 5 } }, 'params.authentication.scheme'],
    ['1.0', 'SendMessage', v1({}, { parts: [null] }), 'params.message.parts[0]'],
    ['1.0', 'SendMessage', v1({}, { parts: [{ text: 5 }] }), 'params.message.parts[0] text'],
    ['1.0', 'SendMessage', v1({}, { parts: [{ kind: 'text', text: 'x' }] }), 'params.message.parts[0]'],
    ['1.0', 'SendMessage', v1({}, { referenceTaskIds: 5 }), 'params.message.referenceTaskIds'],
    ['1.0', 'SendMessage', v1({}, { extensions: 5 }), 'params.message.extensions'],
    ['1.0', 'SendMessage', v1({ configuration: { taskPushNotificationConfig: 'x' } }), 'params.configuration.taskPushNotificationConfig'],
    ['1.0', 'SendStreamingMessage', v1({}, { parts: [{ raw: 7 }] }), 'params.message.parts[0] raw'],
    ['1.0', 'ListTasks', { pageSize: '10' }, 'params.pageSize'],
  ];

  it.each(CASES)('v%s %s %j → -32602 naming %s', async (version, method, params, member) => {
    const error = jest.spyOn(logger, 'error');
    const warn = jest.spyOn(logger, 'warn');
    const res = await rpc(t, worker.handle, requester.key, method, withTask(params), version).expect(200);
    expect(res.body).toEqual({ jsonrpc: '2.0', id: expect.any(Number), error: expect.objectContaining({ code: -32602, message: expect.any(String) }) });
    expect(res.body.error.message).toContain(member);
    expect(res.body.error.message).not.toMatch(/TypeError|Cannot read|of undefined|of null|not iterable|not a function/);
    expect(error).not.toHaveBeenCalled();
    expect(warn).not.toHaveBeenCalled();
  });

  it('a refused message stores nothing: no task, no number where text belongs', async () => {
    const count = async () => (await t.db.query(`SELECT count(*)::int AS n FROM tasks WHERE requester_identity_id = $1`, [requester.id]))[0].n;
    const before = await count();
    for (const [version, method, params] of CASES.filter(([, m]) => m.startsWith('message/') || m.startsWith('Send'))) {
      await rpc(t, worker.handle, requester.key, method, withTask(params), version).expect(200);
    }
    expect(await count()).toBe(before);
    const [stored] = await t.db.query(`SELECT count(*)::int AS n FROM messages WHERE jsonb_typeof(parts->0->'text') = 'number'`);
    expect(stored.n).toBe(0);
  });

  it('well-typed params still work in both generations', async () => {
    const sent = await rpc(t, worker.handle, requester.key, 'message/send', {
      message: v03Message('hi', { referenceTaskIds: [taskId], extensions: ['https://example.test/ext'] }),
      configuration: { blocking: false, historyLength: 1, acceptedOutputModes: ['text/plain'] },
    }).expect(200);
    expect(sent.body.result.status.state).toBe('submitted');
    const v1Sent = await rpc(t, worker.handle, requester.key, 'SendMessage', {
      message: v1Message('hi', { parts: [{ text: 'a' }, { raw: 'aGk=', mediaType: 'text/plain' }, { data: [1, 2] }] }),
      configuration: { returnImmediately: true },
    }, '1.0').expect(200);
    expect(v1Sent.body.result.task.status.state).toBe('TASK_STATE_SUBMITTED');
    const got = await rpc(t, worker.handle, requester.key, 'GetTask', { id: v1Sent.body.result.task.id, historyLength: 1 }, '1.0').expect(200);
    expect(got.body.result.history[0].parts).toEqual([{ text: 'a' }, { raw: 'aGk=', mediaType: 'text/plain' }, { data: [1, 2] }]);
    const unknown = await rpc(t, worker.handle, requester.key, 'tasks/get', { id: randomUUID() }).expect(200);
    expect(unknown.body.error.code).toBe(-32001);
  });

  describe('a request without an id (a JSON-RPC notification)', () => {
    const post = (body: object, version: A2AVersion) => {
      const req = t.http().post(`/a2a/${worker.handle}`).set('X-API-Key', requester.key);
      if (version === '1.0') req.set('A2A-Version', '1.0');
      return req.send(body);
    };

    it.each([
      ['0.3', 'message/send', { message: v03Message('fire and forget'), configuration: { blocking: false } }],
      ['1.0', 'SendMessage', { message: v1Message('fire and forget'), configuration: { returnImmediately: true } }],
      ['0.3', 'tasks/cancel', { id: TASK }],
      ['1.0', 'CancelTask', { id: TASK }],
    ] as Array<[A2AVersion, string, unknown]>)('v%s %s → -32600 Invalid Request, and nothing is done', async (version, method, params) => {
      const tasks = async () => (await t.db.query(`SELECT count(*)::int AS n FROM tasks WHERE requester_identity_id = $1`, [requester.id]))[0].n;
      const before = await tasks();
      for (const body of [{ jsonrpc: '2.0', method, params: withTask(params) }, { jsonrpc: '2.0', id: null, method, params: withTask(params) }]) {
        const res = await post(body, version).expect(200);
        expect(res.body).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.stringContaining('id is required') } });
      }
      expect(await tasks()).toBe(before);
      const task = await rpc(t, worker.handle, requester.key, 'tasks/get', { id: taskId }).expect(200);
      expect(task.body.result.status.state).toBe('submitted');
    });
  });
});
