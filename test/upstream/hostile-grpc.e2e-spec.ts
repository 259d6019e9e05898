import { createServer, type Server } from 'node:http';
import * as grpc from '@grpc/grpc-js';
import { A2AService } from '@a2a-js/sdk/server/grpc';
import { startApp, type TestApp } from '../support/app';
import { enabledAgent, rpc, v03Message, type Agent } from '../support/a2a';
import { eventually } from '../support/eventually';
import { apiKey, bearer, signup, type ConsoleAccount } from '../support/fixtures';
import { freePort } from '../support/server-process';

type Request = grpc.ServerUnaryCall<{ message?: { messageId: string } }, unknown>;

/**
 * A gRPC upstream whose answers cannot be decoded: a real grpc-js server on loopback
 * serves the A2A v1.0 service's SendMessage and SendStreamingMessage, takes the message
 * and answers with bytes that are no protobuf message (status OK). The upstream has the
 * message: a retry must never send it again (docs/api.md §14).
 */
describe('a gRPC upstream whose answer cannot be decoded', () => {
  let t: TestApp;
  let acme: ConsoleAccount;
  let requester: Agent;
  let server: grpc.Server;
  let empty: grpc.Server;
  let cards: Server;
  let port: number;
  let emptyPort: number;
  let cardUrl: string;
  const seen: string[] = [];

  beforeAll(async () => {
    t = await startApp({
      WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true',
      EVENTS_POLL_INTERVAL_MS: '50',
      UPSTREAM_RETRY_SCHEDULE_MS: '50,50,50',
    });
    acme = await signup(t, 'Acme');
    requester = await enabledAgent(t, acme);
    port = await freePort();
    const garbage = () => Buffer.from([0xff, 0xff, 0xff]);
    server = new grpc.Server();
    server.addService(
      {
        ...(A2AService as unknown as grpc.ServiceDefinition),
        sendMessage: { ...A2AService.sendMessage, responseSerialize: garbage },
        sendStreamingMessage: { ...A2AService.sendStreamingMessage, responseSerialize: garbage },
      },
      {
        sendMessage: (call: Request, callback: grpc.sendUnaryData<unknown>) => {
          seen.push(call.request.message?.messageId ?? '');
          callback(null, {});
        },
        sendStreamingMessage: (call: Request & grpc.ServerWritableStream<unknown, unknown>) => {
          seen.push(call.request.message?.messageId ?? '');
          call.write({});
          call.end();
        },
      },
    );
    await new Promise<void>((resolve, reject) =>
      server.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (error) =>
        error ? reject(error) : resolve(),
      ),
    );
    // An upstream whose SendMessage answers a well-formed SendMessageResponse with neither task nor message.
    emptyPort = await freePort();
    empty = new grpc.Server();
    empty.addService(A2AService as unknown as grpc.ServiceDefinition, {
      sendMessage: (call: Request, callback: grpc.sendUnaryData<unknown>) => {
        seen.push(call.request.message?.messageId ?? '');
        callback(null, {});
      },
    });
    await new Promise<void>((resolve, reject) =>
      empty.bindAsync(`127.0.0.1:${emptyPort}`, grpc.ServerCredentials.createInsecure(), (error) =>
        error ? reject(error) : resolve(),
      ),
    );
    // Its card, for a streaming upstream: the gRPC interface, streaming.
    const card = {
      name: 'Garbled',
      description: 'Answers in bytes no client can decode.',
      version: '1',
      supportedInterfaces: [{ url: `127.0.0.1:${port}`, protocolBinding: 'GRPC', protocolVersion: '1.0' }],
      capabilities: { streaming: true },
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain'],
      skills: [{ id: 's', name: 'S', description: 'S', tags: ['s'] }],
    };
    cards = createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(card)),
    );
    const cardPort = await freePort();
    await new Promise<void>((resolve) => cards.listen(cardPort, '127.0.0.1', resolve));
    cardUrl = `http://127.0.0.1:${cardPort}/card.json`;
  });
  afterAll(async () => {
    await t.close();
    server.forceShutdown();
    empty.forceShutdown();
    await new Promise((resolve) => cards.close(resolve));
  });

  const NOT_SENT_AGAIN =
    'The upstream agent accepted the message, but its answer could not be understood; the message is not sent again.';

  /** Sends a message to the bridged agent: the task once it failed (30 s at most), after checks that it went out once. */
  async function sendUntilFailed(handle: string) {
    const message = v03Message('garbled');
    const sent = await rpc(t, handle, requester.key, 'message/send', {
      message,
      configuration: { blocking: false },
    }).expect(200);
    const taskId = sent.body.result.id as string;
    const task = await eventually(
      () =>
        t
          .http()
          .get(`/api/v1/tasks/${taskId}`)
          .set(apiKey(requester.key))
          .then((r) => r.body as { status: { state: string; message?: { parts: Array<{ text: string }> } } }),
      (view) => view.status.state === 'failed',
      30_000,
    );
    // Past the whole retry schedule (3 × 50 ms): the forward is done, and the message went out once.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(seen.filter((id) => id === message.messageId)).toHaveLength(1);
    const [forward] = await t.db.query(`SELECT status, accepted FROM upstream_forwards WHERE task_id = $1`, [taskId]);
    expect(forward).toEqual({ status: 'failed', accepted: true });
    return task;
  }

  it.each([
    ['a send', false],
    ['a stream', true],
  ])('counts the upstream as having answered %s: sent once, and the task fails saying so', async (_, streaming) => {
    const bridged = await enabledAgent(t, acme);
    const set = await t
      .http()
      .put(`/api/v1/identities/${bridged.handle}/upstream`)
      .set(bearer(acme))
      .send(
        streaming
          ? { url: `http://127.0.0.1:${port}/`, card_url: cardUrl }
          : { url: `http://127.0.0.1:${port}/`, protocol_version: '1.0', binding: 'GRPC' },
      )
      .expect(200);
    expect(set.body).toMatchObject({ binding: 'GRPC', streaming });
    const task = await sendUntilFailed(bridged.handle);
    expect(task.status.message?.parts[0].text).toBe(NOT_SENT_AGAIN);
  });

  // The SDK's v1.0 transport converts the answer in grpc-js's callback, outside any try:
  // unguarded, its "missing result" is an uncaught exception (in a server, the process ends).
  it('fails the task, and the server keeps answering, when SendMessage answers neither task nor message', async () => {
    const bridged = await enabledAgent(t, acme);
    await t
      .http()
      .put(`/api/v1/identities/${bridged.handle}/upstream`)
      .set(bearer(acme))
      .send({ url: `http://127.0.0.1:${emptyPort}/`, protocol_version: '1.0', binding: 'GRPC' })
      .expect(200);
    const task = await sendUntilFailed(bridged.handle);
    expect(task.status.message?.parts[0].text).toBe(NOT_SENT_AGAIN);
    await t.http().get('/healthz').expect(200);
  });
});
