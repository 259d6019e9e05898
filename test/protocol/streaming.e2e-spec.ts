import { randomUUID } from 'node:crypto';
import { TaskNotifier } from '../../src/events/task-notifier';
import { startApp, type TestApp } from '../support/app';
import {
  agentPair,
  openRestStream,
  openStream,
  reply,
  rpc,
  submitTask,
  v03Message,
  v1Message,
  type Agent,
} from '../support/a2a';
import { apiKey } from '../support/fixtures';

/** Streaming send and subscribe over SSE (docs/api.md §5). */
describe('protocol streams', () => {
  let t: TestApp;
  let requester: Agent;
  let worker: Agent;

  beforeAll(async () => {
    t = await startApp({ SSE_KEEPALIVE_MS: '50', SSE_MAX_DURATION_MS: '1500' });
    ({ requester, worker } = await agentPair(t));
  });
  afterAll(() => t.close());

  const text = (value: string) => ({ parts: [{ kind: 'text', text: value }] });

  it('message/stream: the task first, then every update in order; closes on a terminal state', async () => {
    const message = v03Message('write a report');
    const stream = await openStream(t.baseUrl, worker.handle, requester.key, 'message/stream', { message });
    expect(stream.response.status).toBe(200);
    expect(stream.response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const first = (await stream.next())!.body;
    expect(first).toMatchObject({
      jsonrpc: '2.0',
      result: { kind: 'task', status: { state: 'submitted' }, history: [{ messageId: message.messageId }] },
    });
    const taskId = first.result.id;

    await reply(t, taskId, worker.key, { state: 'working', message: text('drafting') }).expect(200);
    await reply(t, taskId, worker.key, {
      artifacts: [{ artifactId: 'report', name: 'report.md', parts: [{ kind: 'text', text: '# Q3' }] }],
    }).expect(200);
    await reply(t, taskId, worker.key, {
      artifacts: [
        { artifactId: 'report', append: true, lastChunk: true, parts: [{ kind: 'text', text: 'revenue up' }] },
      ],
    }).expect(200);
    await reply(t, taskId, worker.key, { state: 'completed', message: text('done') }).expect(200);

    const rest = (await stream.rest()).map((envelope) => envelope.result);
    expect(rest).toEqual([
      {
        kind: 'status-update',
        taskId,
        contextId: first.result.contextId,
        final: false,
        status: {
          state: 'working',
          timestamp: expect.any(String),
          message: expect.objectContaining({ role: 'agent', parts: [{ kind: 'text', text: 'drafting' }] }),
        },
      },
      {
        kind: 'artifact-update',
        taskId,
        contextId: first.result.contextId,
        append: false,
        lastChunk: false,
        artifact: { artifactId: 'report', name: 'report.md', parts: [{ kind: 'text', text: '# Q3' }] },
      },
      {
        kind: 'artifact-update',
        taskId,
        contextId: first.result.contextId,
        append: true,
        lastChunk: true,
        artifact: { artifactId: 'report', name: 'report.md', parts: [{ kind: 'text', text: 'revenue up' }] },
      },
      {
        kind: 'status-update',
        taskId,
        contextId: first.result.contextId,
        final: true,
        status: {
          state: 'completed',
          timestamp: expect.any(String),
          message: expect.objectContaining({ parts: [{ kind: 'text', text: 'done' }] }),
        },
      },
    ]);
    const task = await rpc(t, worker.handle, requester.key, 'tasks/get', { id: taskId });
    expect(task.body.result.artifacts).toEqual([
      {
        artifactId: 'report',
        name: 'report.md',
        parts: [
          { kind: 'text', text: '# Q3' },
          { kind: 'text', text: 'revenue up' },
        ],
      },
    ]);
  });

  it('SendStreamingMessage (v1.0): v1.0 events; closes when the task is interrupted', async () => {
    const stream = await openStream(
      t.baseUrl,
      worker.handle,
      requester.key,
      'SendStreamingMessage',
      { message: v1Message('translate') },
      '1.0',
    );
    const first = (await stream.next())!.body;
    expect(first.result.task).toMatchObject({ status: { state: 'TASK_STATE_SUBMITTED' } });
    await reply(t, first.result.task.id, worker.key, { state: 'auth-required', message: text('sign in first') }).expect(
      200,
    );
    expect(await stream.rest()).toEqual([
      {
        jsonrpc: '2.0',
        id: expect.any(Number),
        result: {
          statusUpdate: {
            taskId: first.result.task.id,
            contextId: first.result.task.contextId,
            status: {
              state: 'TASK_STATE_AUTH_REQUIRED',
              timestamp: expect.any(String),
              message: expect.objectContaining({ role: 'ROLE_AGENT', parts: [{ text: 'sign in first' }] }),
            },
          },
        },
      },
    ]);
  });

  it('a streaming follow-up message on an interrupted task resumes it: the task (submitted) first', async () => {
    const task = await submitTask(t, requester, worker);
    await reply(t, task.id, worker.key, { state: 'input-required', message: text('which format?') }).expect(200);
    const stream = await openStream(t.baseUrl, worker.handle, requester.key, 'message/stream', {
      message: v03Message('PDF', { taskId: task.id }),
    });
    const first = (await stream.next())!.body;
    expect(first.result).toMatchObject({ id: task.id, status: { state: 'submitted' } });
    expect(first.result.history.map((m: { role: string }) => m.role)).toEqual(['user', 'agent', 'user']);
    await reply(t, task.id, worker.key, { state: 'failed' }).expect(200);
    expect((await stream.rest()).map((e) => e.result.status.state)).toEqual(['failed']);
  });

  it('subscribe (both generations): the task, then its updates', async () => {
    const task = await submitTask(t, requester, worker);
    const v03 = await openStream(t.baseUrl, worker.handle, requester.key, 'tasks/resubscribe', { id: task.id });
    const v1 = await openStream(t.baseUrl, worker.handle, requester.key, 'SubscribeToTask', { id: task.id }, '1.0');
    expect((await v03.next())!.body.result).toMatchObject({ kind: 'task', id: task.id });
    expect((await v1.next())!.body.result.task).toMatchObject({ id: task.id });
    await reply(t, task.id, worker.key, { state: 'rejected' }).expect(200);
    expect((await v03.rest()).map((e) => e.result.status.state)).toEqual(['rejected']);
    expect((await v1.rest()).map((e) => e.result.statusUpdate.status.state)).toEqual(['TASK_STATE_REJECTED']);
  });

  it('subscribing to a terminal task → -32004; to an unknown or foreign task → -32001 (v1.0: plain JSON-RPC, HTTP 200)', async () => {
    const task = await submitTask(t, requester, worker);
    await reply(t, task.id, worker.key, { state: 'completed' }).expect(200);
    const terminal = await rpc(t, worker.handle, requester.key, 'SubscribeToTask', { id: task.id }, '1.0').expect(200);
    expect(terminal.headers['content-type']).toMatch(/^application\/json/);
    expect(terminal.body.error.code).toBe(-32004);
    expect(
      (await rpc(t, worker.handle, requester.key, 'SubscribeToTask', { id: randomUUID() }, '1.0')).body.error.code,
    ).toBe(-32001);
    expect(
      (await rpc(t, requester.handle, worker.key, 'SubscribeToTask', { id: task.id }, '1.0')).body.error.code,
    ).toBe(-32001);
  });

  it("v0.3 tasks/resubscribe always answers as SSE: a missing, foreign or terminal task is the stream's one error event", async () => {
    const task = await submitTask(t, requester, worker);
    await reply(t, task.id, worker.key, { state: 'completed' }).expect(200);
    for (const [handle, key, id, code] of [
      [worker.handle, requester.key, randomUUID(), -32001],
      [requester.handle, worker.key, task.id, -32001],
      [worker.handle, requester.key, task.id, -32004],
    ] as const) {
      const stream = await openStream(t.baseUrl, handle, key, 'tasks/resubscribe', { id });
      expect(stream.response.status).toBe(200);
      expect(stream.response.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const event = await stream.next();
      expect(event).toMatchObject({ type: 'error', body: { jsonrpc: '2.0', id: expect.any(Number), error: { code } } });
      expect(await stream.next()).toBeNull();
    }
  });

  it('a streaming send that fails before its first event is a plain JSON-RPC error', async () => {
    const res = await rpc(t, worker.handle, requester.key, 'message/stream', {
      message: v03Message('x', { taskId: randomUUID() }),
    }).expect(200);
    expect(res.body.error.code).toBe(-32001);
  });

  it('a subscription stays open through interrupted states until the task is terminal (both generations)', async () => {
    const task = await submitTask(t, requester, worker);
    await reply(t, task.id, worker.key, { state: 'input-required', message: text('which format?') }).expect(200);
    const v03 = await openStream(t.baseUrl, worker.handle, requester.key, 'tasks/resubscribe', { id: task.id });
    const v1 = await openStream(t.baseUrl, worker.handle, requester.key, 'SubscribeToTask', { id: task.id }, '1.0');
    expect((await v03.next())!.body.result.status.state).toBe('input-required');
    expect((await v1.next())!.body.result.task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    // The requester answers (back to submitted); the worker asks again (auth), resumes, and finishes.
    await rpc(t, worker.handle, requester.key, 'message/send', {
      message: v03Message('PDF', { taskId: task.id }),
      configuration: { blocking: false },
    }).expect(200);
    await reply(t, task.id, worker.key, { state: 'auth-required' }).expect(200);
    await reply(t, task.id, worker.key, { state: 'working' }).expect(200);
    await reply(t, task.id, worker.key, { state: 'completed' }).expect(200);
    const v03States = (await v03.rest())
      .filter((e) => e.result.kind === 'status-update')
      .map((e) => [e.result.status.state, e.result.final]);
    expect(v03States).toEqual([
      ['submitted', false],
      ['auth-required', false],
      ['working', false],
      ['completed', true],
    ]);
    const v1States = (await v1.rest())
      .filter((e) => e.result.statusUpdate)
      .map((e) => e.result.statusUpdate.status.state);
    expect(v1States).toEqual([
      'TASK_STATE_SUBMITTED',
      'TASK_STATE_AUTH_REQUIRED',
      'TASK_STATE_WORKING',
      'TASK_STATE_COMPLETED',
    ]);
  });

  it('a streaming send still ends at an interrupted state (both generations)', async () => {
    for (const [method, message, version] of [
      ['message/stream', v03Message('go'), '0.3'],
      ['SendStreamingMessage', v1Message('go'), '1.0'],
    ] as const) {
      const stream = await openStream(t.baseUrl, worker.handle, requester.key, method, { message }, version);
      const first = (await stream.next())!.body.result;
      const taskId = version === '1.0' ? first.task.id : first.id;
      await reply(t, taskId, worker.key, { state: 'input-required' }).expect(200);
      expect(await stream.rest()).toHaveLength(1);
    }
  });

  it('sends keep-alive comments while waiting, and closes at the maximum duration', async () => {
    const task = await submitTask(t, requester, worker);
    const response = await fetch(`${t.baseUrl}/a2a/${worker.handle}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': requester.key },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/resubscribe', params: { id: task.id } }),
    });
    const raw = await response.text(); // ends when the server closes the stream (SSE_MAX_DURATION_MS)
    const frames = raw.split('\n\n').filter(Boolean);
    expect(frames[0]).toMatch(/^data: \{.*"kind":"task"/);
    expect(frames.slice(1).length).toBeGreaterThan(0);
    expect(frames.slice(1).every((frame) => frame === ': keep-alive')).toBe(true);
  });

  it('stops listening when the client goes away', async () => {
    const notifier = t.app.get(TaskNotifier);
    const task = await submitTask(t, requester, worker);
    const stream = await openStream(t.baseUrl, worker.handle, requester.key, 'tasks/resubscribe', { id: task.id });
    await stream.next();
    expect(notifier.listenerCount(task.id)).toBe(1);
    stream.close();
    for (let i = 0; i < 100 && notifier.listenerCount(task.id) > 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(notifier.listenerCount(task.id)).toBe(0);
  });

  /*
   * A2A v1.0 §11.7 answers a stream with 200 OK, as the SDK's own server does; the SDK's
   * REST router leaves a stream's status alone, so the route has to say it. The unary
   * routes keep the codes the SDK's router sets (v0.3 message:send and a new push
   * config: 201).
   */
  describe('HTTP+JSON status codes, as the SDK server answers them', () => {
    const v03Body = (text: string) => ({
      message: { messageId: randomUUID(), role: 'ROLE_USER', content: [{ text }] },
    });

    it.each([
      ['1.0', 'POST /message:stream'],
      ['0.3', 'POST /v1/message:stream'],
      ['1.0', 'POST /tasks/{id}:subscribe'],
      ['1.0', 'GET /tasks/{id}:subscribe'],
      ['0.3', 'POST /v1/tasks/{id}:subscribe'],
      ['0.3', 'GET /v1/tasks/{id}:subscribe'],
    ] as const)('v%s %s answers 200 OK with an event stream', async (version, route) => {
      const task = await submitTask(t, requester, worker);
      const [method, path] = route.split(' ');
      const body = path.endsWith(':stream')
        ? version === '1.0'
          ? { message: v1Message('stream me') }
          : v03Body('stream me')
        : method === 'POST'
          ? {}
          : undefined;
      const stream = await openRestStream(
        t.baseUrl,
        worker.handle,
        requester.key,
        path.replace('{id}', task.id),
        body,
        version,
      );
      try {
        expect(stream.response.status).toBe(200);
        expect(stream.response.headers.get('content-type')).toMatch(/^text\/event-stream/);
        expect((await stream.next())!.body).toMatchObject({ task: { id: expect.any(String) } });
      } finally {
        stream.close();
      }
    });

    it('unary routes: send and cancel 200 (v0.3 send 201), a new push config 201', async () => {
      const post = (path: string, body: object, version: '1.0' | '0.3') => {
        const req = t.http().post(`/a2a/${worker.handle}/rest${path}`).set(apiKey(requester.key));
        return (version === '1.0' ? req.set('A2A-Version', '1.0') : req).send(body);
      };
      const sent = await post(
        '/message:send',
        { message: v1Message('x'), configuration: { returnImmediately: true } },
        '1.0',
      );
      expect(sent.status).toBe(200);
      const legacy = await post('/v1/message:send', { ...v03Body('x'), configuration: { blocking: false } }, '0.3');
      expect(legacy.status).toBe(201);
      expect((await post(`/tasks/${sent.body.task.id}:cancel`, {}, '1.0')).status).toBe(200);
      expect((await post(`/v1/tasks/${legacy.body.task.id}:cancel`, {}, '0.3')).status).toBe(200);
      const config = await post(
        `/tasks/${(await submitTask(t, requester, worker)).id}/pushNotificationConfigs`,
        { url: 'https://example.test/hook' },
        '1.0',
      );
      expect(config.status).toBe(201);
    });
  });
});
