import { randomUUID } from 'node:crypto';
import { ListTasksRequest, SendMessageRequest } from '@a2a-js/sdk';
import { A2AService } from '@a2a-js/sdk/server/grpc';
import { decodeErrorInfo, decodeStatus, GRPC_STATUS_DETAILS_BIN } from '@a2a-js/sdk/errors/grpc';
import { Metadata, status as GrpcStatus, type ClientReadableStream } from '@grpc/grpc-js';
import { createLogger } from '../../src/common/logger';
import { startApp, type TestApp } from '../support/app';
import { eventually } from '../support/eventually';
import {
  agentPair,
  openRestStream,
  reply,
  rpc,
  startBlocking,
  submitTask,
  v1Message,
  type Agent,
} from '../support/a2a';
import { apiKey, bearer } from '../support/fixtures';
import { deepJson, grpcClient, metadataOf, rawCall, unary, wire } from '../support/grpc';
import { logEntries } from '../support/log-entries';

/**
 * The HTTP+JSON and gRPC bindings under the protocol's limits (docs/api.md §5, §10): one
 * per-key quota for every binding, the protocol's body limit, the open-call slots, and
 * open calls that lose their standing.
 */
describe('protocol bindings: limits and standing', () => {
  let t: TestApp;
  /** A second instance on the same database, with a protocol quota of 4 a minute per key. */
  let limited: TestApp;
  /** `t`'s log lines, parsed. */
  const logged: Array<Record<string, unknown>> = [];

  beforeAll(async () => {
    t = await startApp(
      { GRPC_PORT: '0', GRPC_HOST: '127.0.0.1', PROTOCOL_MAX_OPEN_CALLS_PER_KEY: '1' },
      undefined,
      createLogger('info', logEntries(logged)),
    );
    limited = await startApp({ GRPC_PORT: '0', GRPC_HOST: '127.0.0.1', RATE_LIMIT_PROTOCOL_PER_MINUTE: '4' }, t);
  });
  afterAll(async () => {
    await limited.close();
    await t.close();
  });

  const restGet = (agent: Agent, worker: Agent, path: string, app = t) =>
    app
      .http()
      .get(`/a2a/${worker.handle}/rest${path}`)
      .set({ ...apiKey(agent.key), 'A2A-Version': '1.0' });

  it('one protocol quota per key across bindings: past it, HTTP+JSON answers 429 and gRPC RESOURCE_EXHAUSTED, with Retry-After', async () => {
    const { acme, requester, worker } = await agentPair(t);
    await rpc(limited, worker.handle, requester.key, 'ListTasks', {}, '1.0').expect(200);
    await restGet(requester, worker, '/tasks', limited).expect(200);
    const listed = await unary(
      grpcClient(limited),
      'listTasks',
      ListTasksRequest.fromJSON({ tenant: worker.handle }),
      metadataOf(apiKey(requester.key)),
    );
    expect({ code: listed.code, details: listed.details }).toEqual({ code: GrpcStatus.OK, details: '' });
    await rpc(limited, worker.handle, requester.key, 'ListTasks', {}, '1.0').expect(200);

    const rest = await restGet(requester, worker, '/tasks', limited).expect(429);
    expect(rest.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(rest.headers['retry-after']).toMatch(/^\d+$/);
    expect(rest.headers.ratelimit).toMatch(/^"protocol";r=0;t=\d+$/);
    expect(rest.body).toMatchObject({
      status: 429,
      code: 'rate_limited',
      error: { code: 429, status: 'RESOURCE_EXHAUSTED' },
    });
    const legacy = await limited
      .http()
      .get(`/a2a/${worker.handle}/rest/v1/tasks/${randomUUID()}`)
      .set(apiKey(requester.key))
      .expect(429);
    expect(legacy.body).toMatchObject({ code: -32000, data: { reason: 'rate_limited', status: 429 } });

    const grpc = await unary(
      grpcClient(limited),
      'listTasks',
      ListTasksRequest.fromJSON({ tenant: worker.handle }),
      metadataOf(apiKey(requester.key)),
    );
    expect({ code: grpc.code, reason: grpc.reason }).toEqual({
      code: GrpcStatus.RESOURCE_EXHAUSTED,
      reason: 'rate_limited',
    });
    expect(grpc.trailers.get('retry-after')[0]).toMatch(/^\d+$/);

    // Another key of the same identity has its own quota.
    const other = await t
      .http()
      .post('/api/v1/api-keys')
      .set(bearer(acme))
      .send({ scope: 'agent', scoped_identity_id: requester.id })
      .expect(201);
    await restGet({ ...requester, key: other.body.key }, worker, '/tasks', limited).expect(200);
  });

  it('the protocol body limit (1 MiB), not the REST one (256 KiB): HTTP+JSON 413 past it; gRPC RESOURCE_EXHAUSTED', async () => {
    const { requester, worker } = await agentPair(t);
    const send = (text: string) =>
      t
        .http()
        .post(`/a2a/${worker.handle}/rest/message:send`)
        .set({ ...apiKey(requester.key), 'A2A-Version': '1.0' })
        .send({ message: v1Message(text), configuration: { returnImmediately: true } });
    expect((await send('x'.repeat(300 * 1024)).expect(200)).body.task.status.state).toBe('TASK_STATE_SUBMITTED');
    const tooLarge = await send('x'.repeat(1024 * 1024 + 1)).expect(413);
    expect(tooLarge.body).toMatchObject({
      status: 413,
      code: 'payload_too_large',
      error: { code: 413, status: 'RESOURCE_EXHAUSTED' },
    });

    const grpc = await unary(
      grpcClient(t),
      'sendMessage',
      SendMessageRequest.fromJSON({
        tenant: worker.handle,
        message: v1Message('x'.repeat(1024 * 1024 + 1)),
        configuration: { returnImmediately: true },
      }),
      metadataOf(apiKey(requester.key)),
    );
    expect({ code: grpc.code, details: grpc.details }).toEqual({
      code: GrpcStatus.RESOURCE_EXHAUSTED,
      details: expect.any(String),
    });
  });

  it('gRPC: a garbage or truncated request message is INVALID_ARGUMENT (malformed_protobuf), logged as a request, on every kind of method', async () => {
    const { requester } = await agentPair(t);
    // Fixed bytes, the same every run (a random tenant once made a cut frame the SDK's a2a.v1
    // decoder read as a message: src/protocol/grpc-messages.spec pins that frame down).
    const whole = wire.deepSend('', 'c0ffee00-0000-4000-8000-000000000000', 2);
    const frames: Array<[string, Buffer]> = [
      ['truncated', whole.subarray(0, whole.length - 5)],
      ['a wire type that does not exist', Buffer.from([0x0f, 0x01])],
      ['a string longer than the message', Buffer.from([0x0a, 0x05, 0x61])],
      ['a varint that never ends', Buffer.alloc(12, 0xff)],
    ];
    const methods: Array<[string, boolean]> = [
      ['/lf.a2a.v1.A2AService/SendMessage', false],
      ['/lf.a2a.v1.A2AService/GetTask', false],
      ['/lf.a2a.v1.A2AService/SubscribeToTask', true],
      ['/a2a.v1.A2AService/SendMessage', false],
      ['/a2a.v1.A2AService/SendStreamingMessage', true],
    ];
    const client = grpcClient(t);
    try {
      for (const [path, stream] of methods) {
        for (const [name, frame] of frames) {
          const outcome = await rawCall(client, path, frame, metadataOf(apiKey(requester.key)), stream);
          expect({ name, path, code: outcome.code, reason: outcome.reason }).toEqual({
            name,
            path,
            code: GrpcStatus.INVALID_ARGUMENT,
            reason: 'malformed_protobuf',
          });
          expect(outcome.details).toMatch(/not a valid protobuf/);
          const requestId = String(outcome.trailers.get('x-request-id')[0]);
          const line = await eventually(
            async () => logged.find((entry) => entry.msg === 'request' && entry.request_id === requestId),
            (found) => found !== undefined,
          );
          expect(line).toMatchObject({ method: 'gRPC', path, status: 'INVALID_ARGUMENT', level: 30 });
        }
      }
    } finally {
      client.close();
    }
    // No error-level line: a client's garbage is not the service's failure.
    expect(logged.filter((entry) => Number(entry.level) >= 50)).toEqual([]);
  });

  it('the 64-level nesting limit on every binding: JSON-RPC and gRPC (both services) accept the same depth, refuse one level more, and the deepest accepted data reads back everywhere', async () => {
    const { requester, worker } = await agentPair(t);
    const key = metadataOf(apiKey(requester.key));
    // `data` is at the request's sixth level on JSON-RPC (params.message.parts[0].data) and in the decoded gRPC request (message.parts[0].content.value).
    const deepest = 59;
    const jsonRpcSend = (depth: number) =>
      rpc(
        t,
        worker.handle,
        requester.key,
        'SendMessage',
        {
          message: { ...v1Message('deep'), parts: [{ data: deepJson(depth) }] },
          configuration: { returnImmediately: true },
        },
        '1.0',
      );
    const viaJsonRpc = await jsonRpcSend(deepest).expect(200);
    expect(viaJsonRpc.body.result.task.status.state).toBe('TASK_STATE_SUBMITTED');
    expect((await jsonRpcSend(deepest + 1).expect(400)).body.error.data).toMatchObject({ reason: 'body_too_deep' });

    const client = grpcClient(t);
    try {
      const sent = await rawCall(
        client,
        '/lf.a2a.v1.A2AService/SendMessage',
        wire.deepSend(worker.handle, randomUUID(), deepest),
        key,
      );
      expect({ code: sent.code, details: sent.details }).toEqual({ code: GrpcStatus.OK, details: '' });
      const task = A2AService.sendMessage.responseDeserialize(sent.value as Buffer).payload;
      if (task?.$case !== 'task') {
        throw new Error('no task');
      }
      for (const depth of [deepest + 1, 3000, 4500, 60_000]) {
        const refused = await rawCall(
          client,
          '/lf.a2a.v1.A2AService/SendMessage',
          wire.deepSend(worker.handle, randomUUID(), depth),
          key,
        );
        expect({ depth, code: refused.code, reason: refused.reason }).toEqual({
          depth,
          code: GrpcStatus.INVALID_ARGUMENT,
          reason: 'body_too_deep',
        });
      }
      // The v0.3 service: its Part's DataPart holds a Struct (field 3, then 1); a Message's parts are `content` (field 4).
      const legacySend = (depth: number) => {
        const part = wire.field(3, wire.field(1, wire.deepStruct(depth)));
        const message = Buffer.concat([wire.field(1, randomUUID()), wire.number(4, 1), wire.field(5, part)]);
        return rawCall(
          client,
          '/a2a.v1.A2AService/SendMessage',
          wire.field(1, message),
          metadataOf({ ...apiKey(requester.key), 'a2a-tenant': worker.handle }),
        );
      };
      expect((await legacySend(3000)).reason).toBe('body_too_deep');

      // Read back: gRPC GetTask, and JSON-RPC, the data as it was sent.
      for (const id of [task.value.id, viaJsonRpc.body.result.task.id as string]) {
        const read = await rawCall(
          client,
          '/lf.a2a.v1.A2AService/GetTask',
          Buffer.concat([wire.field(1, worker.handle), wire.field(2, id)]),
          key,
        );
        expect({ code: read.code, details: read.details }).toEqual({ code: GrpcStatus.OK, details: '' });
        const part = A2AService.getTask.responseDeserialize(read.value as Buffer).history[0].parts[0].content;
        expect(part).toEqual({ $case: 'data', value: deepJson(deepest) });
        const rpcRead = await rpc(t, worker.handle, requester.key, 'GetTask', { id }, '1.0').expect(200);
        expect(rpcRead.body.result.history[0].parts[0].data).toEqual(deepJson(deepest));
      }
    } finally {
      client.close();
    }
  });

  it('a task that holds data deeper than the limit (stored before it, or another way in) still reads on gRPC: GetTask (both services) and SubscribeToTask answer, the excess cut', async () => {
    const { requester, worker } = await agentPair(t);
    const task = await submitTask(t, requester, worker);
    // 3,000 levels, as the report: deep enough to overflow the SDK's recursive protobuf encoder.
    const deep = '{"a":'.repeat(3000) + '"x"' + '}'.repeat(3000);
    await t.db.query(`UPDATE messages SET parts = $1::jsonb WHERE task_id = $2`, [`[{"data":${deep}}]`, task.id]);
    const client = grpcClient(t);
    try {
      const read = await rawCall(
        client,
        '/lf.a2a.v1.A2AService/GetTask',
        Buffer.concat([wire.field(1, worker.handle), wire.field(2, task.id)]),
        metadataOf(apiKey(requester.key)),
      );
      expect({ code: read.code, details: read.details }).toEqual({ code: GrpcStatus.OK, details: '' });
      const content = A2AService.getTask.responseDeserialize(read.value as Buffer).history[0].parts[0].content;
      if (content?.$case !== 'data') {
        throw new Error('not a data part');
      }
      const text = JSON.stringify(content.value);
      expect(text.startsWith('{"a":{"a":')).toBe(true);
      expect(text).toContain('"[nested deeper than 64 levels]"');
      const legacy = await rawCall(
        client,
        '/a2a.v1.A2AService/GetTask',
        wire.field(1, `tasks/${task.id}`),
        metadataOf({ ...apiKey(requester.key), 'a2a-tenant': worker.handle }),
      );
      expect({ code: legacy.code, details: legacy.details }).toEqual({ code: GrpcStatus.OK, details: '' });

      const events: string[] = [];
      const stream = (
        client as unknown as {
          subscribeToTask(request: unknown, metadata: Metadata): ClientReadableStream<{ payload?: { $case: string } }>;
        }
      ).subscribeToTask({ tenant: worker.handle, id: task.id }, metadataOf(apiKey(requester.key)));
      const done = ended(stream, events);
      await waitFor(() => events.length === 1);
      expect(events).toEqual(['task']);
      stream.cancel();
      expect((await done).code).toBe(GrpcStatus.CANCELLED);
    } finally {
      client.close();
    }
  });

  it('gRPC: a status message that would quote a huge request is cut, so the call is answered and its connection keeps serving', async () => {
    const { requester, worker } = await agentPair(t);
    const key = metadataOf({ ...apiKey(requester.key), 'a2a-tenant': worker.handle });
    const client = grpcClient(t);
    try {
      // The v0.3 service's own message quotes the name: `Invalid or missing task ID in: "yyy…"`.
      const huge = await rawCall(
        client,
        '/a2a.v1.A2AService/GetTask',
        wire.field(1, 'y'.repeat(300_000)),
        key,
        false,
        5000,
      );
      expect(huge.code).toBe(GrpcStatus.INVALID_ARGUMENT);
      expect(Buffer.byteLength(huge.details)).toBeLessThanOrEqual(1024);
      expect(huge.details).toMatch(/^Invalid or missing task ID in: "y+…$/);
      // The status details say the same, and still carry the A2A error for the SDK's client.
      const details = decodeStatus(huge.trailers.get(GRPC_STATUS_DETAILS_BIN)[0] as Buffer);
      expect(details.message).toBe(huge.details);
      expect(decodeErrorInfo(details.details[0].value)).toMatchObject({ domain: 'a2a-protocol.org' });
      const next = await rawCall(
        client,
        '/a2a.v1.A2AService/GetTask',
        wire.field(1, `tasks/${randomUUID()}`),
        key,
        false,
        5000,
      );
      expect(next.code).toBe(GrpcStatus.NOT_FOUND);
    } finally {
      client.close();
    }
  });

  it('an empty v0.3 POST sent as a literal null (as v0.3 reference clients do) is read as no body', async () => {
    const { requester, worker } = await agentPair(t);
    const task = await submitTask(t, requester, worker);
    const res = await t
      .http()
      .post(`/a2a/${worker.handle}/rest/v1/tasks/${task.id}:cancel`)
      .set(apiKey(requester.key))
      .set('content-type', 'application/json')
      .send('null')
      .expect(200);
    expect(res.body).toMatchObject({ id: task.id, status: { state: 'TASK_STATE_CANCELLED' } });
  });

  it('open-call slots are shared by the bindings: a key with its one stream open gets too_many_open_calls on each', async () => {
    const { requester, worker } = await agentPair(t);
    const task = await submitTask(t, requester, worker);
    const open = await openRestStream(t.baseUrl, worker.handle, requester.key, `/tasks/${task.id}:subscribe`);
    expect((await open.next())!.body.task).toMatchObject({ id: task.id });

    const rest = await t
      .http()
      .post(`/a2a/${worker.handle}/rest/tasks/${task.id}:subscribe`)
      .set({ ...apiKey(requester.key), 'A2A-Version': '1.0' })
      .expect(429);
    expect(rest.body).toMatchObject({ code: 'too_many_open_calls', error: { status: 'RESOURCE_EXHAUSTED' } });
    const stream = subscriber().subscribeToTask(
      { tenant: worker.handle, id: task.id },
      metadataOf(apiKey(requester.key)),
    );
    expect(await ended(stream)).toMatchObject({ code: GrpcStatus.RESOURCE_EXHAUSTED, reason: 'too_many_open_calls' });

    open.close();
    // Once the client has gone, its slot is given back.
    for (let i = 0; ; i++) {
      const res = await restGet(requester, worker, `/tasks/${task.id}`);
      if (res.status === 200) {
        break;
      }
      if (i > 50) {
        throw new Error(`slot not given back: ${res.status}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  });

  it('an HTTP+JSON stream whose key is revoked ends with the refusal as its last event, and delivers nothing more', async () => {
    const { acme, requester, worker } = await agentPair(t);
    const task = await submitTask(t, requester, worker);
    const stream = await openRestStream(t.baseUrl, worker.handle, requester.key, `/tasks/${task.id}:subscribe`, {});
    expect((await stream.next())!.body.task).toMatchObject({ id: task.id });
    await t.http().post('/api-keys/self/revoke').set(apiKey(requester.key)).expect(200);
    await t
      .http()
      .post(`/api/v1/tasks/${task.id}/reply`)
      .set(bearer(acme))
      .send({ state: 'working', message: { parts: [{ text: 'the confidential answer' }] } })
      .expect(200);
    const last = await stream.next();
    expect(last).toMatchObject({
      type: 'error',
      body: { code: 'unauthenticated', status: 401, error: { code: 401, status: 'UNAUTHENTICATED' } },
    });
    expect(await stream.next()).toBeNull();
  });

  it('a gRPC stream whose requester is disabled ends with PERMISSION_DENIED (requester_disabled), and delivers nothing more', async () => {
    const { acme, requester, worker } = await agentPair(t);
    const task = await submitTask(t, requester, worker);
    const stream = subscriber().subscribeToTask(
      { tenant: worker.handle, id: task.id },
      metadataOf(apiKey(requester.key)),
    );
    const events: string[] = [];
    const done = ended(stream, events);
    await waitFor(() => events.length === 1);
    expect(events).toEqual(['task']);
    await t
      .http()
      .patch(`/api/v1/identities/${requester.handle}/settings`)
      .set(bearer(acme))
      .send({ enabled: false })
      .expect(200);
    await reply(t, task.id, worker.key, {
      state: 'working',
      message: { parts: [{ text: 'the confidential answer' }] },
    }).expect(200);
    expect(await done).toMatchObject({ code: GrpcStatus.PERMISSION_DENIED, reason: 'requester_disabled' });
    expect(events).toEqual(['task']);
  });

  it('a blocking HTTP+JSON send whose requester is disabled meanwhile answers 403 requester_disabled, not the task', async () => {
    const { acme, requester, worker } = await agentPair(t);
    const sent = await startBlocking(t, worker, () =>
      t
        .http()
        .post(`/a2a/${worker.handle}/rest/message:send`)
        .set({ ...apiKey(requester.key), 'A2A-Version': '1.0' })
        .send({ message: v1Message('work') })
        .then((res) => res),
    );
    await t
      .http()
      .patch(`/api/v1/identities/${requester.handle}/settings`)
      .set(bearer(acme))
      .send({ enabled: false })
      .expect(200);
    await reply(t, sent.taskId, worker.key, {
      state: 'completed',
      message: { parts: [{ text: 'the confidential answer' }] },
    }).expect(200);
    const res = await sent.response;
    expect(res.status).toBe(403);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ code: 'requester_disabled', error: { status: 'PERMISSION_DENIED' } });
    expect(JSON.stringify(res.body)).not.toContain('confidential');
  });

  it('a blocking gRPC send whose key is revoked meanwhile ends UNAUTHENTICATED, not with the task', async () => {
    const { requester, worker } = await agentPair(t);
    const sent = await startBlocking(t, worker, () =>
      unary(
        grpcClient(t),
        'sendMessage',
        SendMessageRequest.fromJSON({ tenant: worker.handle, message: v1Message('work') }),
        metadataOf(apiKey(requester.key)),
      ),
    );
    await t.http().post('/api-keys/self/revoke').set(apiKey(requester.key)).expect(200);
    await reply(t, sent.taskId, worker.key, {
      state: 'completed',
      message: { parts: [{ text: 'the confidential answer' }] },
    }).expect(200);
    const outcome = await sent.response;
    expect({ code: outcome.code, reason: outcome.reason, value: outcome.value }).toEqual({
      code: GrpcStatus.UNAUTHENTICATED,
      reason: 'unauthenticated',
      value: undefined,
    });
  });

  it('streams keep alive and end at the maximum duration: HTTP+JSON (keep-alive comments) and gRPC', async () => {
    const short = await startApp(
      { GRPC_PORT: '0', GRPC_HOST: '127.0.0.1', SSE_KEEPALIVE_MS: '50', SSE_MAX_DURATION_MS: '1000' },
      t,
    );
    try {
      const { requester, worker } = await agentPair(t);
      const task = await submitTask(t, requester, worker);
      const response = await fetch(`${short.baseUrl}/a2a/${worker.handle}/rest/tasks/${task.id}:subscribe`, {
        headers: { 'x-api-key': requester.key, 'A2A-Version': '1.0' },
      });
      const frames = (await response.text()).split('\n\n').filter(Boolean); // ends when the server closes the stream
      expect(frames[0]).toMatch(/^data: \{"task":/);
      expect(frames.slice(1).length).toBeGreaterThan(0);
      expect(frames.slice(1).every((frame) => frame === ': keep-alive')).toBe(true);

      const events: string[] = [];
      const stream = (
        grpcClient(short) as unknown as {
          subscribeToTask(request: unknown, metadata: Metadata): ClientReadableStream<{ payload?: { $case: string } }>;
        }
      ).subscribeToTask({ tenant: worker.handle, id: task.id }, metadataOf(apiKey(requester.key)));
      expect(await ended(stream, events)).toEqual({ code: GrpcStatus.OK, reason: null });
      expect(events).toEqual(['task']);
    } finally {
      await short.close();
    }
  });

  it('shutdown: open gRPC streams end, the server stops, and the port is closed', async () => {
    const instance = await startApp({ GRPC_PORT: '0', GRPC_HOST: '127.0.0.1' }, t);
    const { requester, worker } = await agentPair(t);
    const task = await submitTask(t, requester, worker);
    const client = grpcClient(instance) as unknown as {
      subscribeToTask(request: unknown, metadata: Metadata): ClientReadableStream<{ payload?: { $case: string } }>;
    };
    const events: string[] = [];
    const done = ended(
      client.subscribeToTask({ tenant: worker.handle, id: task.id }, metadataOf(apiKey(requester.key))),
      events,
    );
    await waitFor(() => events.length === 1);
    await instance.close();
    expect(await done).toEqual({ code: GrpcStatus.OK, reason: null });
    const after = await unary(
      client as never,
      'listTasks',
      ListTasksRequest.fromJSON({ tenant: worker.handle }),
      metadataOf(apiKey(requester.key)),
    );
    expect(after.code).toBe(GrpcStatus.UNAVAILABLE);
  });

  /** The v1.0 service's SubscribeToTask, as a raw gRPC client sees it. */
  const subscriber = () =>
    grpcClient(t) as unknown as {
      subscribeToTask(request: unknown, metadata: Metadata): ClientReadableStream<{ payload?: { $case: string } }>;
    };
});

/** Reads a gRPC server stream to its end; resolves with its final status and `a2a-reason` trailer. */
function ended(
  stream: ClientReadableStream<any>,
  events: string[] = [],
): Promise<{ code: number; reason: string | null }> {
  return new Promise((resolve) => {
    stream.on('data', (event: { payload?: { $case: string } }) => events.push(event.payload?.$case ?? 'raw'));
    stream.on('error', (error: { code: number; metadata?: Metadata }) => {
      const reason = error.metadata?.get('a2a-reason')[0];
      resolve({ code: error.code, reason: reason === undefined ? null : String(reason) });
    });
    stream.on('end', () => resolve({ code: GrpcStatus.OK, reason: null }));
  });
}

async function waitFor(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 250 && !condition(); i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  if (!condition()) {
    throw new Error('condition not met in time');
  }
}
