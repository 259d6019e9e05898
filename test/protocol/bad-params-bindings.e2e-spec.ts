import * as grpc from '@grpc/grpc-js';
import { ListTasksRequest, SendMessageRequest, TaskPushNotificationConfig } from '@a2a-js/sdk';
import type { Logger } from 'pino';
import { LOGGER } from '../../src/common/tokens';
import { startApp, type TestApp } from '../support/app';
import { agentPair, submitTask, v1Message, type A2AVersion, type Agent } from '../support/a2a';
import { apiKey } from '../support/fixtures';
import { grpcClient, metadataOf, unary } from '../support/grpc';
import { LegacyA2AService } from '@a2a-js/sdk/compat/v0_3/server/grpc';
import { GrpcBindingService } from '../../src/protocol/grpc-binding.service';

/**
 * docs/api.md §5 on the HTTP+JSON and gRPC bindings, as bad-params.e2e-spec.ts pins it on
 * JSON-RPC: a body member of the wrong type, or a missing required member, is the
 * binding's invalid-params error naming the member — HTTP+JSON v1.0: 400 with the
 * `google.rpc.Status` body (`INVALID_ARGUMENT`, ErrorInfo `INVALID_PARAMS`); v0.3: 400
 * `{code: -32602}`; gRPC: `INVALID_ARGUMENT` — never a coerced value stored, a 500, an
 * internal exception's text or an error-level log line.
 */
const INTERNAL = /TypeError|Cannot read|of undefined|of null|not iterable|not a function|unexpected error/i;

describe('protocol bindings: params of the wrong type', () => {
  let t: TestApp;
  let requester: Agent;
  let worker: Agent;
  let taskId: string;
  let logger: Logger;

  beforeAll(async () => {
    t = await startApp({ PROTOCOL_BLOCKING_TIMEOUT_MS: '50', GRPC_PORT: '0', GRPC_HOST: '127.0.0.1' });
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
      : typeof value === 'string'
        ? value.replace(TASK, taskId)
        : Array.isArray(value)
          ? value.map(withTask)
          : value && typeof value === 'object'
            ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withTask(v)]))
            : value;

  const v1 = (extra: Record<string, unknown>, message: Record<string, unknown> = {}) => ({
    message: v1Message('x', message),
    ...extra,
  });
  const v03Message = (message: Record<string, unknown> = {}) => ({
    messageId: 'm-1',
    role: 'ROLE_USER',
    content: [{ text: 'x' }],
    ...message,
  });
  const v03 = (extra: Record<string, unknown>, message: Record<string, unknown> = {}) => ({
    message: v03Message(message),
    ...extra,
  });

  // [generation, route, body, the member named]
  const REST: Array<[A2AVersion, string, unknown, string]> = [
    ['1.0', '/message:send', { message: 'hello' }, 'body.message'],
    ['1.0', '/message:send', {}, 'body.message'],
    ['1.0', '/message:send', v1({}, { messageId: 5 }), 'body.message.messageId'],
    ['1.0', '/message:send', v1({}, { parts: [{ text: 5 }] }), 'body.message.parts[0] text'],
    ['1.0', '/message:send', v1({}, { parts: [null] }), 'body.message.parts[0]'],
    ['1.0', '/message:send', v1({}, { parts: 'x' }), 'body.message.parts'],
    ['1.0', '/message:send', v1({}, { referenceTaskIds: 5 }), 'body.message.referenceTaskIds'],
    ['1.0', '/message:send', v1({}, { contextId: 7 }), 'body.message.contextId'],
    [
      '1.0',
      '/message:send',
      v1({ configuration: { returnImmediately: 'yes' } }),
      'body.configuration.returnImmediately',
    ],
    ['1.0', '/message:send', v1({ configuration: { historyLength: '2' } }), 'body.configuration.historyLength'],
    [
      '1.0',
      '/message:send',
      v1({ configuration: { taskPushNotificationConfig: { url: 5 } } }),
      'body.configuration.taskPushNotificationConfig.url',
    ],
    ['1.0', '/message:stream', v1({}, { parts: [{ raw: 7 }] }), 'body.message.parts[0] raw'],
    ['1.0', '/message:stream', [], 'body'],
    ['1.0', `/tasks/${TASK}/pushNotificationConfigs`, {}, 'body.url'],
    ['1.0', `/tasks/${TASK}/pushNotificationConfigs`, { url: HOOK, token: 5 }, 'body.token'],
    [
      '1.0',
      `/tasks/${TASK}/pushNotificationConfigs`,
      { url: HOOK, authentication: { scheme: 5 } },
      'body.authentication.scheme',
    ],
    ['1.0', `/tasks/${TASK}/pushNotificationConfigs`, 'x', 'body'],
    ['0.3', '/v1/message:send', { message: 'hello' }, 'body.message'],
    ['0.3', '/v1/message:send', {}, 'body.message'],
    ['0.3', '/v1/message:send', v03({}, { messageId: 5 }), 'body.message.messageId'],
    ['0.3', '/v1/message:send', v03({}, { content: [{ text: 5 }] }), 'body.message.content[0].text'],
    ['0.3', '/v1/message:send', v03({}, { content: [null] }), 'body.message.content[0]'],
    [
      '0.3',
      '/v1/message:send',
      v03({}, { content: [{ file: { fileWithUri: 5 } }] }),
      'body.message.content[0].file.fileWithUri',
    ],
    ['0.3', '/v1/message:send', v03({}, { content: [{ data: { data: [1] } }] }), 'body.message.content[0].data.data'],
    ['0.3', '/v1/message:send', v03({}, { extensions: 5 }), 'body.message.extensions'],
    ['0.3', '/v1/message:send', v03({ configuration: { blocking: 'no' } }), 'body.configuration.blocking'],
    ['0.3', '/v1/message:stream', v03({}, { content: 'x' }), 'body.message.content'],
    ['0.3', `/v1/tasks/${TASK}/pushNotificationConfigs`, {}, 'body.pushNotificationConfig'],
    [
      '0.3',
      `/v1/tasks/${TASK}/pushNotificationConfigs`,
      { pushNotificationConfig: { url: 5 } },
      'body.pushNotificationConfig.url',
    ],
    [
      '0.3',
      `/v1/tasks/${TASK}/pushNotificationConfigs`,
      { pushNotificationConfig: { url: HOOK, authentication: { schemes: 'Bearer' } } },
      'body.pushNotificationConfig.authentication.schemes',
    ],
  ];

  const post = (version: A2AVersion, path: string, body: unknown) => {
    const req = t
      .http()
      .post(`/a2a/${worker.handle}/rest${path}`)
      .set({ ...apiKey(requester.key), 'content-type': 'application/json' });
    if (version === '1.0') {
      req.set('A2A-Version', '1.0');
    }
    return req.send(JSON.stringify(body));
  };

  it.each(REST)('HTTP+JSON v%s POST %s %j → 400 naming %s', async (version, path, body, member) => {
    const error = jest.spyOn(logger, 'error');
    const res = await post(version, String(withTask(path)), withTask(body)).expect(400);
    if (version === '1.0') {
      expect(res.body).toEqual({
        error: {
          code: 400,
          status: 'INVALID_ARGUMENT',
          message: expect.any(String),
          details: [expect.objectContaining({ reason: 'INVALID_PARAMS', domain: 'a2a-protocol.org' })],
        },
      });
      expect(res.body.error.message).toContain(member);
      expect(res.body.error.message).not.toMatch(INTERNAL);
    } else {
      expect(res.body).toEqual({ code: -32602, message: expect.any(String) });
      expect(res.body.message).toContain(member);
      expect(res.body.message).not.toMatch(INTERNAL);
    }
    expect(error).not.toHaveBeenCalled();
  });

  it('HTTP+JSON: a refused body stores nothing (no task, no number coerced to text)', async () => {
    const count = async () =>
      (await t.db.query(`SELECT count(*)::int AS n FROM tasks WHERE requester_identity_id = $1`, [requester.id]))[0].n;
    const before = await count();
    for (const [version, path, body] of REST.filter(([, p]) => p.includes('message:'))) {
      await post(version, path, withTask(body)).expect(400);
    }
    expect(await count()).toBe(before);
    const [configs] = await t.db.query(`SELECT count(*)::int AS n FROM push_notification_configs WHERE task_id = $1`, [
      taskId,
    ]);
    expect(configs.n).toBe(0);
  });

  it('HTTP+JSON: well-typed bodies still work in both generations', async () => {
    const sent = await post(
      '1.0',
      '/message:send',
      v1({ configuration: { returnImmediately: true, historyLength: 1 } }, { referenceTaskIds: [taskId] }),
    ).expect(200);
    expect(sent.body.task.status.state).toBe('TASK_STATE_SUBMITTED');
    const legacy = await post(
      '0.3',
      '/v1/message:send',
      v03({ configuration: { blocking: false } }, { content: [{ text: 'a' }, { data: { data: { a: 1 } } }] }),
    );
    expect(legacy.status).toBeLessThan(300);
    expect(legacy.body.task.status.state).toBe('TASK_STATE_SUBMITTED');
    const config = await post('1.0', `/tasks/${taskId}/pushNotificationConfigs`, { url: HOOK, token: 't' }).expect(201);
    expect(config.body).toMatchObject({ taskId, url: HOOK });
  });

  /**
   * gRPC: protobuf fixes each member's type on the wire (a member sent with the wrong
   * wire type is skipped by the decoder, so it arrives absent); what remains is a
   * missing required member, refused as INVALID_ARGUMENT naming it.
   */
  const GRPC: Array<[string, unknown, string]> = [
    ['sendMessage', SendMessageRequest.fromJSON({}), 'message'],
    [
      'sendMessage',
      SendMessageRequest.fromJSON({ message: { role: 'ROLE_USER', parts: [{ text: 'x' }] } }),
      'messageId',
    ],
    [
      'sendMessage',
      SendMessageRequest.fromJSON({ message: { messageId: 'm', role: 'ROLE_USER', parts: [] } }),
      'parts',
    ],
    [
      'sendMessage',
      SendMessageRequest.fromJSON({
        message: { messageId: 'm', role: 'ROLE_USER', parts: [{ mediaType: 'text/plain' }] },
      }),
      'parts[0]',
    ],
    ['getTask', { id: '', tenant: '' }, 'id'],
    ['cancelTask', { id: '', tenant: '' }, 'id'],
    ['createTaskPushNotificationConfig', TaskPushNotificationConfig.fromJSON({ taskId: TASK }), 'url'],
    ['getTaskPushNotificationConfig', { taskId: '', id: 'c', tenant: '' }, 'taskId'],
  ];

  it.each(GRPC)('gRPC v1.0 %s %j → INVALID_ARGUMENT naming %s', async (method, request, member) => {
    const error = jest.spyOn(logger, 'error');
    const outcome = await unary(
      grpcClient(t),
      method,
      { ...(withTask(request) as object), tenant: worker.handle },
      metadataOf(apiKey(requester.key)),
    );
    expect(outcome.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(outcome.details).toContain(member);
    expect(outcome.details).not.toMatch(INTERNAL);
    expect(error).not.toHaveBeenCalled();
  });
});

describe('protocol bindings: gRPC v0.3 requests with members missing', () => {
  let t: TestApp;
  let requester: Agent;
  let worker: Agent;

  beforeAll(async () => {
    t = await startApp({ PROTOCOL_BLOCKING_TIMEOUT_MS: '50', GRPC_PORT: '0', GRPC_HOST: '127.0.0.1' });
    ({ requester, worker } = await agentPair(t));
  });
  afterAll(() => t.close());

  type Definition = Record<string, { path: string; responseStream: boolean }>;
  const UNARY = Object.values(LegacyA2AService as unknown as Definition)
    .filter((method) => !method.responseStream)
    .map((method) => method.path);

  it.each(UNARY)('%s with an empty request: INVALID_ARGUMENT or NOT_FOUND, never internal text', async (path) => {
    const client = new grpc.Client(
      `127.0.0.1:${t.app.get(GrpcBindingService).port}`,
      grpc.credentials.createInsecure(),
    );
    const metadata = metadataOf({ ...apiKey(requester.key), 'a2a-tenant': worker.handle });
    const raw = (value: Buffer) => value;
    const error = await new Promise<grpc.ServiceError | null>((resolve) =>
      client.makeUnaryRequest(path, raw, raw, Buffer.alloc(0), metadata, (e) => resolve(e)),
    );
    client.close();
    if (path.endsWith('/GetAgentCard')) {
      return expect(error).toBeNull();
    }
    expect(error?.details).not.toMatch(INTERNAL);
    expect([grpc.status.INVALID_ARGUMENT, grpc.status.NOT_FOUND]).toContain(error?.code);
  });
});

describe('protocol bindings: gRPC RateLimit metadata on success', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startApp({ GRPC_PORT: '0', GRPC_HOST: '127.0.0.1', RATE_LIMIT_PROTOCOL_PER_MINUTE: '50' });
  });
  afterAll(() => t.close());

  it('a successful call carries RateLimit-Policy and RateLimit in its initial metadata, as HTTP+JSON answers carry the headers', async () => {
    const { requester, worker } = await agentPair(t);
    const rest = await t
      .http()
      .get(`/a2a/${worker.handle}/rest/tasks`)
      .set({ ...apiKey(requester.key), 'A2A-Version': '1.0' })
      .expect(200);
    expect(rest.headers['ratelimit-policy']).toBe('"protocol";q=50;w=60');
    const client = grpcClient(t) as unknown as {
      listTasks(
        request: unknown,
        metadata: grpc.Metadata,
        callback: (error: grpc.ServiceError | null) => void,
      ): grpc.ClientUnaryCall;
    };
    const initial = await new Promise<grpc.Metadata>((resolve, reject) => {
      const call = client.listTasks(
        ListTasksRequest.fromJSON({ tenant: worker.handle }),
        metadataOf(apiKey(requester.key)),
        (error) => error && reject(error),
      );
      call.on('metadata', resolve);
    });
    expect(initial.get('ratelimit-policy')).toEqual(['"protocol";q=50;w=60']);
    expect(String(initial.get('ratelimit')[0])).toMatch(/^"protocol";r=\d+;t=\d+$/);
  });
});

describe("protocol bindings: HTTP+JSON v1.0 A2A errors as problem+json with the specification's type URIs (A2A v1.0 §5.4, §11.6)", () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startApp({});
  });
  afterAll(() => t.close());

  it("task not found, version not supported: the type URI, title, status and detail beside the SDK's google.rpc.Status", async () => {
    const { requester, worker } = await agentPair(t);
    const missing = await t
      .http()
      .get(`/a2a/${worker.handle}/rest/tasks/${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}`)
      .set({ ...apiKey(requester.key), 'A2A-Version': '1.0' })
      .expect(404);
    expect(missing.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(missing.body).toEqual({
      type: 'https://a2a-protocol.org/errors/task-not-found',
      title: 'Task Not Found',
      status: 404,
      detail: expect.any(String),
      error: {
        code: 404,
        status: 'NOT_FOUND',
        message: missing.body.detail,
        details: [expect.objectContaining({ reason: 'TASK_NOT_FOUND', domain: 'a2a-protocol.org' })],
      },
    });
    const version = await t
      .http()
      .get(`/a2a/${worker.handle}/rest/tasks`)
      .set({ ...apiKey(requester.key), 'A2A-Version': '2.0' })
      .expect(400);
    expect(version.body).toMatchObject({
      type: 'https://a2a-protocol.org/errors/version-not-supported',
      status: 400,
      error: { details: [expect.objectContaining({ reason: 'VERSION_NOT_SUPPORTED' })] },
    });
    // The v0.3 binding keeps its own error object.
    const legacy = await t
      .http()
      .get(`/a2a/${worker.handle}/rest/v1/tasks/nope`)
      .set(apiKey(requester.key))
      .expect(404);
    expect(legacy.body.type).toBeUndefined();
  });
});
