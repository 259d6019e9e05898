import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { LOGGER } from '../../src/common/tokens';
import { startApp, type TestApp } from '../support/app';
import { agentPair, rpc, submitTask, v03Message, v1Message, type A2AVersion, type Agent } from '../support/a2a';

/**
 * docs/api.md §5: params of the wrong type, or a missing required member, are -32602 with
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
    // Sends that a mutation leaves valid and blocking return at once.
    t = await startApp({ PROTOCOL_BLOCKING_TIMEOUT_MS: '50' });
    ({ requester, worker } = await agentPair(t));
    taskId = (await submitTask(t, requester, worker)).id;
    logger = t.app.get(LOGGER);
  });
  afterAll(() => t.close());
  afterEach(() => jest.restoreAllMocks());

  const HOOK = 'https://example.test/hook';
  const TASK = '<task>';
  const withTask = (value: unknown): unknown =>
    value === TASK
      ? taskId
      : Array.isArray(value)
        ? value.map(withTask)
        : value && typeof value === 'object'
          ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withTask(v)]))
          : value;

  const v03 = (extra: Record<string, unknown>, message: Record<string, unknown> = {}) => ({
    message: v03Message('x', message),
    ...extra,
  });
  const v1 = (extra: Record<string, unknown>, message: Record<string, unknown> = {}) => ({
    message: v1Message('x', message),
    ...extra,
  });

  const CASES: Array<[A2AVersion, string, unknown, string]> = [
    ['0.3', 'tasks/get', { id: 5 }, 'params.id'],
    ['0.3', 'tasks/get', { id: [] }, 'params.id'],
    ['0.3', 'tasks/get', { id: TASK, historyLength: '2' }, 'params.historyLength'],
    ['0.3', 'tasks/cancel', { id: 5 }, 'params.id'],
    ['0.3', 'tasks/cancel', { taskId: 5 }, 'params.id'],
    ['0.3', 'tasks/resubscribe', { id: 5 }, 'params.id'],
    ['0.3', 'tasks/pushNotificationConfig/set', { taskId: 5, pushNotificationConfig: { url: HOOK } }, 'params.taskId'],
    ['0.3', 'tasks/pushNotificationConfig/set', { taskId: TASK }, 'params.pushNotificationConfig'],
    [
      '0.3',
      'tasks/pushNotificationConfig/set',
      { taskId: TASK, pushNotificationConfig: { url: HOOK, authentication: { schemes: 'Bearer' } } },
      'params.pushNotificationConfig.authentication.schemes',
    ],
    ['0.3', 'tasks/pushNotificationConfig/get', { id: 5 }, 'params.id'],
    [
      '0.3',
      'tasks/pushNotificationConfig/delete',
      { id: TASK, pushNotificationConfigId: 5 },
      'params.pushNotificationConfigId',
    ],
    ['0.3', 'message/send', { message: 'hello' }, 'params.message'],
    ['0.3', 'message/send', v03({}, { referenceTaskIds: 5 }), 'params.message.referenceTaskIds'],
    ['0.3', 'message/send', v03({}, { extensions: 5 }), 'params.message.extensions'],
    ['0.3', 'message/send', v03({}, { parts: [{ kind: 'file', file: null }] }), 'params.message.parts[0] file'],
    ['0.3', 'message/send', v03({}, { parts: [{ kind: 'text', text: 5 }] }), 'params.message.parts[0] text'],
    ['0.3', 'message/send', v03({}, { parts: [null] }), 'params.message.parts[0]'],
    [
      '0.3',
      'message/send',
      v03({ configuration: { pushNotificationConfig: { url: HOOK, authentication: { schemes: 'Bearer' } } } }),
      'params.configuration.pushNotificationConfig.authentication.schemes',
    ],
    ['0.3', 'message/stream', v03({}, { parts: [{ kind: 'data', data: [1] }] }), 'params.message.parts[0] data'],
    ['1.0', 'GetTask', { id: 5 }, 'params.id'],
    ['1.0', 'GetTask', { id: [] }, 'params.id'],
    ['1.0', 'CancelTask', { id: 5 }, 'params.id'],
    ['1.0', 'SubscribeToTask', { id: 5 }, 'params.id'],
    ['1.0', 'CreateTaskPushNotificationConfig', { taskId: 5, url: HOOK }, 'params.taskId'],
    ['1.0', 'CreateTaskPushNotificationConfig', { taskId: TASK }, 'params.url'],
    [
      '1.0',
      'CreateTaskPushNotificationConfig',
      { taskId: TASK, url: HOOK, authentication: { scheme: 5 } },
      'params.authentication.scheme',
    ],
    ['1.0', 'SendMessage', v1({}, { parts: [null] }), 'params.message.parts[0]'],
    ['1.0', 'SendMessage', v1({}, { parts: [{ text: 5 }] }), 'params.message.parts[0] text'],
    ['1.0', 'SendMessage', v1({}, { parts: [{ kind: 'text', text: 'x' }] }), 'params.message.parts[0]'],
    ['1.0', 'SendMessage', v1({}, { referenceTaskIds: 5 }), 'params.message.referenceTaskIds'],
    ['1.0', 'SendMessage', v1({}, { extensions: 5 }), 'params.message.extensions'],
    [
      '1.0',
      'SendMessage',
      v1({ configuration: { taskPushNotificationConfig: 'x' } }),
      'params.configuration.taskPushNotificationConfig',
    ],
    ['1.0', 'SendStreamingMessage', v1({}, { parts: [{ raw: 7 }] }), 'params.message.parts[0] raw'],
    ['1.0', 'ListTasks', { pageSize: '10' }, 'params.pageSize'],
  ];

  it.each(CASES)('v%s %s %j → -32602 naming %s', async (version, method, params, member) => {
    const error = jest.spyOn(logger, 'error');
    const warn = jest.spyOn(logger, 'warn');
    const res = await rpc(t, worker.handle, requester.key, method, withTask(params), version).expect(200);
    expect(res.body).toEqual({
      jsonrpc: '2.0',
      id: expect.any(Number),
      error: expect.objectContaining({ code: -32602, message: expect.any(String) }),
    });
    expect(res.body.error.message).toContain(member);
    expect(res.body.error.message).not.toMatch(
      /TypeError|Cannot read|of undefined|of null|not iterable|not a function/,
    );
    expect(error).not.toHaveBeenCalled();
    expect(warn).not.toHaveBeenCalled();
  });

  it('a refused message stores nothing: no task, no number where text belongs', async () => {
    const count = async () =>
      (await t.db.query(`SELECT count(*)::int AS n FROM tasks WHERE requester_identity_id = $1`, [requester.id]))[0].n;
    const before = await count();
    for (const [version, method, params] of CASES.filter(([, m]) => m.startsWith('message/') || m.startsWith('Send'))) {
      await rpc(t, worker.handle, requester.key, method, withTask(params), version).expect(200);
    }
    expect(await count()).toBe(before);
    const [stored] = await t.db.query(
      `SELECT count(*)::int AS n FROM messages WHERE jsonb_typeof(parts->0->'text') = 'number'`,
    );
    expect(stored.n).toBe(0);
  });

  it('well-typed params still work in both generations', async () => {
    const sent = await rpc(t, worker.handle, requester.key, 'message/send', {
      message: v03Message('hi', { referenceTaskIds: [taskId], extensions: ['https://example.test/ext'] }),
      configuration: { blocking: false, historyLength: 1, acceptedOutputModes: ['text/plain'] },
    }).expect(200);
    expect(sent.body.result.status.state).toBe('submitted');
    const v1Sent = await rpc(
      t,
      worker.handle,
      requester.key,
      'SendMessage',
      {
        message: v1Message('hi', {
          parts: [{ text: 'a' }, { raw: 'aGk=', mediaType: 'text/plain' }, { data: [1, 2] }],
        }),
        configuration: { returnImmediately: true },
      },
      '1.0',
    ).expect(200);
    expect(v1Sent.body.result.task.status.state).toBe('TASK_STATE_SUBMITTED');
    const got = await rpc(
      t,
      worker.handle,
      requester.key,
      'GetTask',
      { id: v1Sent.body.result.task.id, historyLength: 1 },
      '1.0',
    ).expect(200);
    expect(got.body.result.history[0].parts).toEqual([
      { text: 'a' },
      { raw: 'aGk=', mediaType: 'text/plain' },
      { data: [1, 2] },
    ]);
    const unknown = await rpc(t, worker.handle, requester.key, 'tasks/get', { id: randomUUID() }).expect(200);
    expect(unknown.body.error.code).toBe(-32001);
  });

  describe('a request without an id (a JSON-RPC notification)', () => {
    const post = (body: object, version: A2AVersion) => {
      const req = t.http().post(`/a2a/${worker.handle}`).set('X-API-Key', requester.key);
      if (version === '1.0') {
        req.set('A2A-Version', '1.0');
      }
      return req.send(body);
    };

    it.each([
      ['0.3', 'message/send', { message: v03Message('fire and forget'), configuration: { blocking: false } }],
      ['1.0', 'SendMessage', { message: v1Message('fire and forget'), configuration: { returnImmediately: true } }],
      ['0.3', 'tasks/cancel', { id: TASK }],
      ['1.0', 'CancelTask', { id: TASK }],
    ] as Array<[A2AVersion, string, unknown]>)(
      'v%s %s → -32600 Invalid Request, and nothing is done',
      async (version, method, params) => {
        const tasks = async () =>
          (await t.db.query(`SELECT count(*)::int AS n FROM tasks WHERE requester_identity_id = $1`, [requester.id]))[0]
            .n;
        const before = await tasks();
        for (const body of [
          { jsonrpc: '2.0', method, params: withTask(params) },
          { jsonrpc: '2.0', id: null, method, params: withTask(params) },
        ]) {
          const res = await post(body, version).expect(200);
          expect(res.body).toEqual({
            jsonrpc: '2.0',
            id: null,
            error: { code: -32600, message: expect.stringContaining('id is required') },
          });
        }
        expect(await tasks()).toBe(before);
        const task = await rpc(t, worker.handle, requester.key, 'tasks/get', { id: taskId }).expect(200);
        expect(task.body.result.status.state).toBe('submitted');
      },
    );
  });

  /**
   * Beyond the listed cases: every member (and array item) of well-formed params for
   * every non-streaming method, replaced by each JSON type or removed. None may end in
   * -32603 or internal text; the streaming methods take the same params shapes.
   */
  it("no member of any method's params, replaced by a wrong type or removed, is an internal error", async () => {
    const REMOVE = Symbol('remove');
    const HOSTILE: unknown[] = [5, 1.5, 'x', true, null, [], [[]], {}, [null], REMOVE];
    const unknownId = randomUUID();
    const v03Parts = [
      { kind: 'text', text: 'x' },
      { kind: 'file', file: { uri: 'https://example.test/a', mimeType: 'text/plain', name: 'a' } },
      { kind: 'file', file: { bytes: 'aGk=' } },
      { kind: 'data', data: { a: 1 } },
    ];
    const v1Parts = [
      { text: 'x' },
      { raw: 'aGk=', mediaType: 'text/plain', filename: 'a' },
      { url: 'https://example.test/a' },
      { data: { a: 1 } },
    ];
    const TEMPLATES: Array<[A2AVersion, string, unknown]> = [
      [
        '0.3',
        'message/send',
        {
          message: v03Message('x', {
            parts: v03Parts,
            referenceTaskIds: [TASK],
            extensions: ['https://example.test/ext'],
            metadata: { a: 1 },
          }),
          configuration: { blocking: false, historyLength: 1, acceptedOutputModes: ['text/plain'] },
          metadata: { a: 1 },
        },
      ],
      ['0.3', 'tasks/get', { id: TASK, historyLength: 1, metadata: { a: 1 } }],
      ['0.3', 'tasks/cancel', { id: unknownId, metadata: { a: 1 } }],
      [
        '0.3',
        'tasks/pushNotificationConfig/set',
        {
          taskId: TASK,
          pushNotificationConfig: {
            url: HOOK,
            id: 'c1',
            token: 't',
            authentication: { schemes: ['Bearer'], credentials: 'c' },
          },
        },
      ],
      ['0.3', 'tasks/pushNotificationConfig/get', { id: TASK, pushNotificationConfigId: 'c1' }],
      ['0.3', 'tasks/pushNotificationConfig/list', { id: TASK }],
      ['0.3', 'tasks/pushNotificationConfig/delete', { id: TASK, pushNotificationConfigId: 'none' }],
      [
        '1.0',
        'SendMessage',
        {
          message: v1Message('x', {
            parts: v1Parts,
            referenceTaskIds: [TASK],
            extensions: ['https://example.test/ext'],
            metadata: { a: 1 },
          }),
          configuration: { returnImmediately: true, historyLength: 1, acceptedOutputModes: ['text/plain'] },
          metadata: { a: 1 },
        },
      ],
      ['1.0', 'GetTask', { id: TASK, historyLength: 1 }],
      [
        '1.0',
        'ListTasks',
        {
          contextId: unknownId,
          status: 'TASK_STATE_SUBMITTED',
          pageSize: 10,
          pageToken: '',
          historyLength: 1,
          statusTimestampAfter: '2020-01-01T00:00:00Z',
          includeArtifacts: true,
        },
      ],
      ['1.0', 'CancelTask', { id: unknownId, metadata: { a: 1 } }],
      [
        '1.0',
        'CreateTaskPushNotificationConfig',
        { taskId: TASK, url: HOOK, id: 'c2', token: 't', authentication: { scheme: 'Bearer', credentials: 'c' } },
      ],
      ['1.0', 'GetTaskPushNotificationConfig', { taskId: TASK, id: 'c2' }],
      ['1.0', 'ListTaskPushNotificationConfigs', { taskId: TASK, pageSize: 10, pageToken: '' }],
      ['1.0', 'DeleteTaskPushNotificationConfig', { taskId: TASK, id: 'none' }],
    ];
    const paths = (value: unknown, path: Array<string | number> = []): Array<Array<string | number>> =>
      value && typeof value === 'object'
        ? Object.entries(value).flatMap(([key, child]) => [
            [...path, Array.isArray(value) ? Number(key) : key],
            ...paths(child, [...path, Array.isArray(value) ? Number(key) : key]),
          ])
        : [];
    const replaced = (template: unknown, path: Array<string | number>, hostile: unknown) => {
      const copy = structuredClone(template) as Record<string | number, unknown>;
      const parent = path.slice(0, -1).reduce((node: any, key) => node[key], copy);
      if (hostile === REMOVE) {
        if (Array.isArray(parent)) {
          parent.splice(path[path.length - 1] as number, 1);
        } else {
          delete parent[path[path.length - 1]];
        }
      } else {
        parent[path[path.length - 1]] = hostile;
      }
      return copy;
    };
    const error = jest.spyOn(logger, 'error');
    const failures: string[] = [];
    let requests = 0;
    for (const [version, method, template] of TEMPLATES) {
      const base = withTask(template);
      for (const path of paths(base)) {
        for (const hostile of HOSTILE) {
          const params = replaced(base, path, hostile);
          const res = await rpc(t, worker.handle, requester.key, method, params, version);
          requests += 1;
          const internal =
            res.status !== 200 ||
            res.body.error?.code === -32603 ||
            /TypeError|Cannot read|of undefined|of null|not iterable|not a function/.test(
              res.body.error?.message ?? '',
            );
          if (internal) {
            failures.push(
              `v${version} ${method} ${path.join('.')}=${String(hostile === REMOVE ? '(removed)' : JSON.stringify(hostile))} → ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`,
            );
          }
        }
      }
    }
    expect({ requests: requests > 500, failures: failures.slice(0, 20) }).toEqual({ requests: true, failures: [] });
    expect(error).not.toHaveBeenCalled();
  }, 180_000); // one call per member and wrong type
});
