import { randomUUID } from 'node:crypto';
import { SendMessageRequest, TaskState, type StreamResponse, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';
import { fromGrpcError } from '@a2a-js/sdk/errors/grpc';
import type { TestApp } from '../support/app';
import { grpcClient, metadataOf, rawCall, unary, wire } from '../support/grpc';
import { agentPair, reply, startBlocking, type Agent } from '../support/a2a';
import { EVERY_BINDING, say, sdkClient, startAppForCards } from '../support/a2a-sdk';
import { GrpcBindingService } from '../../src/protocol/grpc-binding.service';

describe('every binding through the official SDK client', () => {
  let t: TestApp;
  let requester: Agent;
  let worker: Agent;
  let grpcPort: number;

  beforeAll(async () => {
    t = await startAppForCards();
    grpcPort = t.app.get(GrpcBindingService).port!;
    ({ requester, worker } = await agentPair(t));
  });
  afterAll(() => t.close());

  it('the card advertises each binding in both generations', async () => {
    const card = (await t.http().get(`/a2a/${worker.handle}/card`).expect(200)).body as {
      supportedInterfaces: unknown[];
    };
    const url = `${t.baseUrl}/a2a/${worker.handle}`;
    expect(card.supportedInterfaces).toEqual([
      { url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
      { url: `${url}/rest`, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
      { url: `${url}/rest`, protocolBinding: 'HTTP+JSON', protocolVersion: '0.3' },
      { url: `127.0.0.1:${grpcPort}`, protocolBinding: 'GRPC', protocolVersion: '1.0', tenant: worker.handle },
      { url: `127.0.0.1:${grpcPort}`, protocolBinding: 'GRPC', protocolVersion: '0.3', tenant: worker.handle },
    ]);
  });

  it('HTTP+JSON: A2A-Version picks the generation (a patch number ignored); another version is VersionNotSupported', async () => {
    const get = (path: string, version?: string) => {
      const req = t.http().get(`/a2a/${worker.handle}/rest${path}`).set('X-API-Key', requester.key);
      return version === undefined ? req : req.set('A2A-Version', version);
    };
    expect((await get('/tasks', '1.0.0').expect(200)).body).toMatchObject({
      tasks: expect.any(Array),
      nextPageToken: expect.any(String),
    });
    await get(`/v1/tasks/${randomUUID()}`, '0.3.0').expect(404);
    const refused = await get('/tasks', '2.0').expect(400);
    expect(refused.body.error).toMatchObject({
      code: 400,
      details: [expect.objectContaining({ reason: 'VERSION_NOT_SUPPORTED' })],
    });
  });

  it('gRPC: an a2a-version other than 1.0 or 0.3 (a patch number ignored) is VersionNotSupported, as UNIMPLEMENTED (what the A2A TCK 1.0 checks); nothing runs', async () => {
    const client = grpcClient(t);
    const send = (version: string) =>
      unary(
        client,
        'sendMessage',
        SendMessageRequest.fromJSON({
          tenant: worker.handle,
          message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: `version ${version}` }] },
          configuration: { returnImmediately: true },
        }),
        metadataOf({ 'x-api-key': requester.key, 'a2a-version': version }),
      );
    const tasks = async () => (await t.db.query(`SELECT count(*)::int AS n FROM tasks`))[0].n as number;
    try {
      const before = await tasks();
      for (const version of ['99.0', '2.0', '1', '1.0.0.0', 'x']) {
        const refused = await send(version);
        expect({ version, code: refused.code }).toEqual({ version, code: GrpcStatus.UNIMPLEMENTED });
        const error = fromGrpcError({ ...refused, metadata: refused.trailers } as unknown as ServiceError);
        expect(error.name).toBe('VersionNotSupportedError');
      }
      expect(await tasks()).toBe(before);
      for (const version of ['1.0', '1.0.3', '0.3']) {
        expect((await send(version)).code).toBe(GrpcStatus.OK);
      }
      expect(await tasks()).toBe(before + 3);
      // The v0.3 service checks it too.
      const legacy = await rawCall(
        client,
        '/a2a.v1.A2AService/GetTask',
        wire.field(1, `tasks/${randomUUID()}`),
        metadataOf({ 'x-api-key': requester.key, 'a2a-tenant': worker.handle, 'a2a-version': '99.0' }),
      );
      expect(legacy.code).toBe(GrpcStatus.UNIMPLEMENTED);
    } finally {
      client.close();
    }
  });

  describe.each(EVERY_BINDING)('%s, A2A %s', (binding, version) => {
    let client: Client;

    beforeAll(async () => {
      ({ client } = await sdkClient(t, requester, worker, binding, version));
    });

    it('send → the worker replies through REST → the blocking send returns the result', async () => {
      const sent = await startBlocking(t, worker, () => client.sendMessage(say('What is 6 × 7?')));
      await reply(t, sent.taskId, worker.key, {
        state: 'completed',
        message: { parts: [{ kind: 'text', text: '42' }] },
        artifacts: [{ artifactId: 'answer', parts: [{ kind: 'data', data: { value: 42 } }] }],
      }).expect(200);
      const task = (await sent.response) as Task;
      expect(task.id).toBe(sent.taskId);
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(task.status?.message?.parts[0].content).toEqual({ $case: 'text', value: '42' });
      expect(task.artifacts[0].parts[0].content).toEqual({ $case: 'data', value: { value: 42 } });
    });

    it('stream: the task, then each update, until the task completes', async () => {
      const events: StreamResponse[] = [];
      const stream = client.sendMessageStream(say('Write a haiku'));
      const first = await stream.next();
      events.push(first.value as StreamResponse);
      const task = (first.value as StreamResponse).payload;
      if (task?.$case !== 'task') {
        throw new Error(`first event is ${task?.$case}`);
      }
      expect(task.value.status?.state).toBe(TaskState.TASK_STATE_SUBMITTED);

      await reply(t, task.value.id, worker.key, { state: 'working' }).expect(200);
      await reply(t, task.value.id, worker.key, {
        artifacts: [{ artifactId: 'haiku', parts: [{ kind: 'text', text: 'old pond' }] }],
      }).expect(200);
      await reply(t, task.value.id, worker.key, { state: 'completed' }).expect(200);
      for await (const event of stream) {
        events.push(event);
      }
      expect(events.map((e) => e.payload?.$case)).toEqual(['task', 'statusUpdate', 'artifactUpdate', 'statusUpdate']);
    });

    it('get, subscribe and cancel the task', async () => {
      const sent = await startBlocking(t, worker, () => client.sendMessage(say('Long job')));
      await reply(t, sent.taskId, worker.key, { state: 'working' }).expect(200);
      const got = await client.getTask({ tenant: '', id: sent.taskId, historyLength: 1 });
      expect(got.status?.state).toBe(TaskState.TASK_STATE_WORKING);
      expect(got.history.map((m) => m.parts[0].content?.value)).toEqual(['Long job']);

      const subscription = client.resubscribeTask({ tenant: '', id: sent.taskId });
      expect(((await subscription.next()).value as StreamResponse).payload?.$case).toBe('task');
      const canceled = await client.cancelTask({ tenant: '', id: sent.taskId, metadata: undefined });
      expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
      const rest: StreamResponse[] = [];
      for await (const event of subscription) {
        rest.push(event);
      }
      expect(
        rest.map((e) => (e.payload?.$case === 'statusUpdate' ? e.payload.value.status?.state : e.payload?.$case)),
      ).toEqual([TaskState.TASK_STATE_CANCELED]);
      expect(((await sent.response) as Task).status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    });

    it("an unknown task is the SDK's TaskNotFoundError", async () => {
      await expect(client.getTask({ tenant: '', id: randomUUID(), historyLength: undefined })).rejects.toMatchObject({
        name: 'TaskNotFoundError',
      });
    });
  });
});
