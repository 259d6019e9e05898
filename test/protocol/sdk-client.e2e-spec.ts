import { randomUUID } from 'node:crypto';
import {
  AgentCard,
  SendMessageRequest,
  TaskState,
  verifyAgentCardSignature,
  type StreamResponse,
  type Task,
} from '@a2a-js/sdk';
import { importJWK, type CryptoKey } from 'jose';
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  type AgentCardResolver,
  type Client,
} from '@a2a-js/sdk/client';
import { startAppAtOwnAddress, type TestApp } from '../support/app';
import { agentPair, reply, startBlocking, type Agent } from '../support/a2a';
import { apiKey } from '../support/fixtures';

/** Adds the agent's key to every call, as docs/api.md §4's card asks (`X-API-Key` header). */
class ApiKeyInterceptor {
  constructor(private readonly key: string) {}

  async before(args: { options?: { serviceParameters?: Record<string, string> } }): Promise<void> {
    args.options = {
      ...args.options,
      serviceParameters: { ...args.options?.serviceParameters, 'X-API-Key': this.key },
    };
  }

  async after(): Promise<void> {}
}

/**
 * A client of `@a2a-js/sdk` created from the worker's card URL, authenticating as
 * the requester. A v0.3 client sees the card as a v0.3-only peer would (the SDK picks
 * the 1.0 interface when both are offered). `methods` records the JSON-RPC methods it
 * sends, with their A2A-Version.
 */
async function sdkClient(
  t: TestApp,
  requester: Agent,
  worker: Agent,
  version: '1.0' | '0.3',
  methods: Set<string>,
): Promise<Client> {
  const fetchImpl: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers);
    methods.add(
      `${(JSON.parse(String(init?.body)) as { method: string }).method} (A2A-Version: ${headers.get('A2A-Version')})`,
    );
    return fetch(input, init);
  };
  const resolver = new DefaultAgentCardResolver();
  const cardResolver: AgentCardResolver = {
    resolve: async (url, path) => {
      const card = await resolver.resolve(url, path);
      return { ...card, supportedInterfaces: card.supportedInterfaces.filter((i) => i.protocolVersion === version) };
    },
  };
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ legacyCompat: { enabled: true }, fetchImpl })],
      clientConfig: { interceptors: [new ApiKeyInterceptor(requester.key)] },
      cardResolver,
    }),
  );
  const client = await factory.createFromUrl(`${t.baseUrl}/a2a/${worker.handle}/card`, '');
  expect(client.protocolVersion).toBe(version);
  expect((client.transport as unknown as { endpoint: string }).endpoint).toBe(`${t.baseUrl}/a2a/${worker.handle}`);
  return client;
}

const say = (text: string, extra: { taskId?: string } = {}) =>
  SendMessageRequest.fromJSON({ message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }], ...extra } });

describe.each(['1.0', '0.3'] as const)('@a2a-js/sdk client speaking A2A %s', (version) => {
  let t: TestApp;
  let requester: Agent;
  let worker: Agent;
  let client: Client;
  const methods = new Set<string>();

  beforeAll(async () => {
    // The card's URLs come from PUBLIC_BASE_URL: make it this server's own.
    t = await startAppAtOwnAddress();
    ({ requester, worker } = await agentPair(t));
    client = await sdkClient(t, requester, worker, version, methods);
  });
  afterAll(() => t.close());

  it('a blocking send returns once the worker has replied through REST', async () => {
    const sent = await startBlocking(t, worker, () => client.sendMessage(say('What is 6 × 7?')));
    await reply(t, sent.taskId, worker.key, {
      state: 'completed',
      message: { parts: [{ kind: 'text', text: '42' }] },
      artifacts: [{ artifactId: 'answer', name: 'answer.json', parts: [{ kind: 'data', data: { value: 42 } }] }],
    }).expect(200);
    const task = (await sent.response) as Task;
    expect(task.id).toBe(sent.taskId);
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(task.status?.message?.parts[0].content).toEqual({ $case: 'text', value: '42' });
    expect(task.artifacts).toEqual([expect.objectContaining({ artifactId: 'answer', name: 'answer.json' })]);
    expect(task.artifacts[0].parts[0].content).toEqual({ $case: 'data', value: { value: 42 } });
  });

  it('a stream shows the task, then each update, and ends when the task completes', async () => {
    const events: StreamResponse[] = [];
    const stream = client.sendMessageStream(say('Write a haiku'));
    const first = await stream.next();
    expect(first.done).toBe(false);
    events.push(first.value as StreamResponse);
    const task = (first.value as StreamResponse).payload;
    if (task?.$case !== 'task') {
      throw new Error(`first event is ${task?.$case}`);
    }
    expect(task.value.status?.state).toBe(TaskState.TASK_STATE_SUBMITTED);

    await reply(t, task.value.id, worker.key, {
      state: 'working',
      message: { parts: [{ kind: 'text', text: 'counting syllables' }] },
    }).expect(200);
    await reply(t, task.value.id, worker.key, {
      artifacts: [{ artifactId: 'haiku', parts: [{ kind: 'text', text: 'old pond / frog jumps in' }] }],
    }).expect(200);
    await reply(t, task.value.id, worker.key, { state: 'completed' }).expect(200);
    for await (const event of stream) {
      events.push(event);
    }

    expect(events.map((e) => e.payload?.$case)).toEqual(['task', 'statusUpdate', 'artifactUpdate', 'statusUpdate']);
    const states = events.flatMap((e) => (e.payload?.$case === 'statusUpdate' ? [e.payload.value.status?.state] : []));
    expect(states).toEqual([TaskState.TASK_STATE_WORKING, TaskState.TASK_STATE_COMPLETED]);
  });

  it('get shows the result, with historyLength', async () => {
    const sent = await startBlocking(t, worker, () => client.sendMessage(say('Summarize')));
    await reply(t, sent.taskId, worker.key, {
      state: 'input-required',
      message: { parts: [{ kind: 'text', text: 'Summarize what?' }] },
    }).expect(200);
    expect(((await sent.response) as Task).status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);

    const answered = client.sendMessage(say('The minutes', { taskId: sent.taskId }));
    for (let i = 0; i < 200; i++) {
      const now = await client.getTask({ tenant: '', id: sent.taskId, historyLength: undefined });
      if (now.status?.state === TaskState.TASK_STATE_SUBMITTED) {
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await reply(t, sent.taskId, worker.key, {
      state: 'completed',
      message: { parts: [{ kind: 'text', text: 'Short meeting.' }] },
    }).expect(200);
    expect(((await answered) as Task).status?.state).toBe(TaskState.TASK_STATE_COMPLETED);

    const full = await client.getTask({ tenant: '', id: sent.taskId, historyLength: undefined });
    expect(full.history.map((m) => m.parts[0].content?.value)).toEqual([
      'Summarize',
      'Summarize what?',
      'The minutes',
      'Short meeting.',
    ]);
    const last = await client.getTask({ tenant: '', id: sent.taskId, historyLength: 1 });
    expect(last.history.map((m) => m.parts[0].content?.value)).toEqual(['Short meeting.']);
  });

  it('subscribe and cancel through the client', async () => {
    const sent = await startBlocking(t, worker, () => client.sendMessage(say('Long job')));
    await reply(t, sent.taskId, worker.key, { state: 'working' }).expect(200);

    const subscription = client.resubscribeTask({ tenant: '', id: sent.taskId });
    const first = await subscription.next();
    expect((first.value as StreamResponse).payload?.$case).toBe('task');
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

  it("getAgentCard fetches the extended card: the worker's admitted skills too (v1.0: signature verified with the JWKS)", async () => {
    const skill = (id: string, visibility: string) => ({
      id,
      name: id,
      description: `${id}.`,
      tags: ['t'],
      visibility,
    });
    await t
      .http()
      .patch(`/api/v1/identities/${worker.handle}`)
      .set(apiKey(worker.key))
      .send({ skills: [skill('open', 'public'), skill('partners-only', 'admitted')] })
      .expect(200);
    const jwks = (await t.http().get('/.well-known/jwks.json').expect(200)).body as { keys: Array<{ kid: string }> };
    const sdkVerify = verifyAgentCardSignature(
      async (kid) =>
        (await importJWK(
          jwks.keys.find((key) => key.kid === kid)!,
          'ES256',
        )) as CryptoKey,
    );
    // The client hands the verifier its parsed card; the SDK's canonicalization reads the card's JSON form.
    const verify =
      version === '1.0' ? (parsed: AgentCard) => sdkVerify(AgentCard.toJSON(parsed) as AgentCard) : undefined;
    const card = await client.getAgentCard(undefined, verify);
    expect(card.skills.map((s) => s.id)).toEqual(['open', 'partners-only']);
  });

  it('spoke the method names of its generation only', () => {
    const names =
      version === '1.0'
        ? ['SendMessage', 'SendStreamingMessage', 'GetTask', 'SubscribeToTask', 'CancelTask', 'GetExtendedAgentCard']
        : [
            'message/send',
            'message/stream',
            'tasks/get',
            'tasks/resubscribe',
            'tasks/cancel',
            'agent/getAuthenticatedExtendedCard',
          ];
    expect([...methods].sort()).toEqual(names.map((name) => `${name} (A2A-Version: ${version})`).sort());
  });
});
