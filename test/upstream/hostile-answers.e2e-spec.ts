import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { startApp, type TestApp } from '../support/app';
import { agentPair, enabledAgent, openStream, reply, rpc, submitTask, v03Message, type Agent } from '../support/a2a';
import { eventually } from '../support/eventually';
import { apiKey, bearer, mintAdminKey, signup, type ConsoleAccount } from '../support/fixtures';
import { freePort } from '../support/server-process';

/**
 * Upstream agents that answer badly, on purpose: a plain HTTP server started here
 * plays the upstream, answering each JSON-RPC call as the test says. The service must
 * keep its limits on what an upstream answers (as on a REST reply), never send an
 * accepted message twice, and understand the deviations seen from A2A software in the
 * field (docs/api.md, "Upstream agents").
 */

interface Call {
  method: string;
  id: number | string;
  params: { message?: { messageId: string; parts: unknown[] }; id?: string };
}

type Answer = (call: Call, res: ServerResponse) => void;

interface Hostile {
  url: string;
  cardUrl: string;
  calls: Call[];
  /** How the next calls are answered (by method). */
  answer: Record<string, Answer>;
  card: Record<string, unknown>;
  close: () => Promise<void>;
}

async function startHostile(): Promise<Hostile> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const hostile: Hostile = {
    url: `${base}/a2a`,
    cardUrl: `${base}/card.json`,
    calls: [],
    answer: {},
    card: {},
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(hostile.card));
      return;
    }
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      const call = JSON.parse(body) as Call;
      hostile.calls.push(call);
      const answer = hostile.answer[call.method];
      if (answer) {
        answer(call, res);
      } else {
        json(res, { jsonrpc: '2.0', id: call.id, error: { code: -32601, message: 'Method not found' } });
      }
    });
  });
  server.keepAliveTimeout = 100;
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return hostile;
}

const json = (res: ServerResponse, body: unknown) =>
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));

/** An answer with this JSON-RPC result. */
const result =
  (value: unknown): Answer =>
  (call, res) =>
    json(res, { jsonrpc: '2.0', id: call.id, result: value });

/** An SSE answer: each result one event (`prefix` before every `data:` line). */
const sse = (res: ServerResponse, call: Call, results: unknown[], prefix = '') => {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.end(
    results.map((result) => `${prefix}data: ${JSON.stringify({ jsonrpc: '2.0', id: call.id, result })}\n\n`).join(''),
  );
};

const ids = { id: 'up-task-1', contextId: 'up-ctx-1' };
const status = (state: string, text?: string, messageId = `s-${Math.random()}`) => ({
  state,
  ...(text ? { message: { messageId, role: 'ROLE_AGENT', parts: [{ text }] } } : {}),
});

interface TaskView {
  status: { state: string; message?: { parts: Array<{ text: string }> } };
  artifacts?: Array<{ artifactId: string; parts: Array<{ text: string }> }>;
  history?: Array<{ role: string; parts: Array<{ text: string }> }>;
}

describe('hostile upstream answers', () => {
  let t: TestApp;
  let acme: ConsoleAccount;
  let requester: Agent;
  let hostile: Hostile;

  beforeAll(async () => {
    t = await startApp({
      WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true',
      EVENTS_POLL_INTERVAL_MS: '50',
      UPSTREAM_RETRY_SCHEDULE_MS: '50,50,50',
      LEDGER_MAX_ARTIFACT_BYTES_PER_TASK: '65536',
    });
    acme = await signup(t, 'Acme');
    requester = await enabledAgent(t, acme);
    hostile = await startHostile();
  });
  afterAll(async () => {
    await t.close();
    await hostile.close();
  });

  /** A new identity bridged to the hostile upstream (no card read: not streaming, unless `card`). */
  async function bridge(options: { card?: Record<string, unknown>; version?: '1.0' | '0.3' } = {}): Promise<Agent> {
    const bridged = await enabledAgent(t, acme);
    if (options.card) {
      hostile.card = options.card;
    }
    await t
      .http()
      .put(`/api/v1/identities/${bridged.handle}/upstream`)
      .set(bearer(acme))
      .send(
        options.card
          ? { url: hostile.url, card_url: hostile.cardUrl }
          : { url: hostile.url, protocol_version: options.version ?? '1.0', binding: 'JSONRPC' },
      )
      .expect(200);
    return bridged;
  }

  /** A v1.0 card offering the hostile upstream's JSON-RPC interface, streaming. */
  const cardOf = (extra: Record<string, unknown> = {}) => ({
    name: 'Hostile',
    description: 'Answers badly.',
    version: '1',
    supportedInterfaces: [{ url: hostile.url, protocolBinding: 'JSONRPC', protocolVersion: '1.0', ...extra }],
    capabilities: { streaming: true },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 's', name: 'S', description: 'S', tags: ['s'] }],
  });

  /** The task's events of one kind, as stored. */
  const eventsOf = async (upstreamTaskId: string, kind: string): Promise<number> => {
    const rows: Array<{ n: number }> = await t.db.query(
      `SELECT count(*)::int AS n FROM task_events e JOIN tasks k ON k.id = e.task_id
        WHERE k.upstream_task_id = $1 AND e.kind = $2`,
      [upstreamTaskId, kind],
    );
    return rows[0].n;
  };

  /** Sends `text` without blocking and waits until the task settles; the task as the requester reads it. */
  async function sendAndSettle(
    bridged: Agent,
    text: string,
    timeoutMs = 30_000,
  ): Promise<{ task: TaskView; messageId: string }> {
    const message = v03Message(text);
    const sent = await rpc(t, bridged.handle, requester.key, 'message/send', {
      message,
      configuration: { blocking: false },
    }).expect(200);
    const task = await eventually(
      () =>
        t
          .http()
          .get(`/api/v1/tasks/${sent.body.result.id}`)
          .set(apiKey(requester.key))
          .then((r) => r.body as TaskView),
      (view) => ['completed', 'failed', 'input-required'].includes(view.status.state),
      timeoutMs,
    );
    return { task, messageId: message.messageId };
  }

  const sendsOf = (messageId: string) =>
    hostile.calls.filter((call) => call.params.message?.messageId === messageId).length;
  const reasonOf = (task: TaskView) => task.status.message?.parts[0].text ?? '';

  it('an answer with 20,000 artifacts fails the task naming the limit (a REST reply holds at most 10)', async () => {
    const bridged = await bridge();
    hostile.answer = {
      SendMessage: result({
        task: {
          ...ids,
          status: status('TASK_STATE_COMPLETED', 'done'),
          artifacts: Array.from({ length: 20_000 }, (_, i) => ({ artifactId: `a${i}`, parts: [{ text: 'x' }] })),
        },
      }),
    };
    const started = Date.now();
    const { task, messageId } = await sendAndSettle(bridged, 'flood');
    expect(task.status.state).toBe('failed');
    expect(reasonOf(task)).toBe(
      "The upstream agent's answer was refused: it holds 20000 artifacts, more than the 10 an answer may hold.",
    );
    expect(task.artifacts ?? []).toEqual([]);
    expect(sendsOf(messageId)).toBe(1);
    expect(Date.now() - started).toBeLessThan(10_000);
  }, 120_000);

  it('refuses an answer nested deeper than 64 levels, or with too many parts, naming the limit', async () => {
    const bridged = await bridge();
    let deep: unknown = 'bottom';
    for (let i = 0; i < 100; i++) {
      deep = { d: deep };
    }
    hostile.answer = {
      SendMessage: result({ message: { messageId: 'deep', role: 'ROLE_AGENT', parts: [{ data: deep }] } }),
    };
    const nested = await sendAndSettle(bridged, 'deep');
    expect(nested.task.status.state).toBe('failed');
    expect(reasonOf(nested.task)).toBe("The upstream agent's answer was refused: it is nested deeper than 64 levels.");

    const parts = await bridge();
    hostile.answer = {
      SendMessage: result({
        message: {
          messageId: 'many',
          role: 'ROLE_AGENT',
          parts: Array.from({ length: 101 }, () => ({ text: 'p' })),
        },
      }),
    };
    const many = await sendAndSettle(parts, 'parts');
    expect(many.task.status.state).toBe('failed');
    expect(reasonOf(many.task)).toBe(
      "The upstream agent's answer was refused: a message holds 101 parts, more than the 100 it may hold.",
    );
  });

  it('refuses an answer holding a NUL character or a lone UTF-16 surrogate, naming it, sent once', async () => {
    for (const [text, reason] of [
      ['a\u0000b', 'it holds a NUL character, which cannot be stored'],
      ['a\ud800b', 'it holds a lone UTF-16 surrogate, which is not text and cannot be stored'],
    ]) {
      const bridged = await bridge();
      hostile.answer = {
        // JSON.stringify writes the surrogate as the escape `\ud800`, as a hostile agent would.
        SendMessage: result({ task: { ...ids, status: status('TASK_STATE_COMPLETED', text) } }),
      };
      const { task, messageId } = await sendAndSettle(bridged, 'unstorable');
      expect({ state: task.status.state, reason: reasonOf(task) }).toEqual({
        state: 'failed',
        reason: `The upstream agent's answer was refused: ${reason}.`,
      });
      expect(sendsOf(messageId)).toBe(1);
    }
  });

  it("a stream of 1,500 artifact events is written in many bounded transactions; another organization's stream keeps flowing meanwhile", async () => {
    const bridged = await bridge({ card: cardOf() });
    hostile.answer = {
      SendStreamingMessage: (call, res) =>
        sse(res, call, [
          { task: { ...ids, status: status('TASK_STATE_SUBMITTED') } },
          ...Array.from({ length: 1_500 }, (_, i) => ({
            artifactUpdate: { ...ids, artifact: { artifactId: `a${i}`, parts: [{ text: 'x' }] } },
          })),
          { statusUpdate: { ...ids, status: status('TASK_STATE_COMPLETED', 'done') } },
        ]),
    };
    // Another organization: a REST worker's task, its requester on a stream.
    const { requester: other, worker } = await agentPair(t, await signup(t, 'Globex flood'));
    const quiet = await submitTask(t, other, worker);
    const stream = await openStream(t.baseUrl, worker.handle, other.key, 'tasks/resubscribe', { id: quiet.id });
    await stream.next();

    const flood = sendAndSettle(bridged, 'stream flood', 90_000);
    await eventually(
      () => eventsOf(ids.id, 'artifact'),
      (n) => n > 0,
      30_000,
    );
    const waits: number[] = [];
    for (let i = 0; i < 5; i++) {
      const started = Date.now();
      await reply(t, quiet.id, worker.key, { message: { parts: [{ kind: 'text', text: `tick ${i}` }] } }).expect(200);
      const seen = await stream.next(10_000);
      expect(seen?.body.result.status.message.parts[0].text).toBe(`tick ${i}`);
      waits.push(Date.now() - started);
    }
    // The flood was still being written while the other stream got its events.
    expect(await eventsOf(ids.id, 'artifact')).toBeLessThan(1_500);
    stream.close();
    expect(Math.max(...waits)).toBeLessThan(2_000);

    const { task } = await flood;
    expect(task.status.state).toBe('completed');
    // Every event a transaction wrote has that transaction's id (xmin): none wrote more than its bound.
    const rows: Array<{ n: number }> = await t.db.query(
      `SELECT count(*)::int AS n FROM task_events e JOIN tasks k ON k.id = e.task_id
        WHERE k.upstream_task_id = $1 GROUP BY e.xmin::text ORDER BY n DESC LIMIT 1`,
      [ids.id],
    );
    expect(rows[0].n).toBeLessThanOrEqual(200);
  }, 120_000);

  it("an artifact over the task's byte limit fails the task naming the limit", async () => {
    const bridged = await bridge();
    hostile.answer = {
      SendMessage: result({
        task: {
          id: 'up-big',
          contextId: 'up-big-ctx',
          status: status('TASK_STATE_COMPLETED'),
          artifacts: [{ artifactId: 'big', parts: [{ text: 'x'.repeat(70_000) }] }],
        },
      }),
    };
    const { task, messageId } = await sendAndSettle(bridged, 'big');
    expect(task.status.state).toBe('failed');
    expect(reasonOf(task)).toBe(
      "The upstream agent's answer was refused: the task's artifacts would exceed their maximum of 65536 bytes of content.",
    );
    expect(sendsOf(messageId)).toBe(1);
  });

  describe.each([false, true])('HTTP 200 with a body that cannot be parsed (streaming: %s)', (streaming) => {
    it('is sent exactly once and never again; the task fails saying the upstream answered', async () => {
      const bridged = await bridge(streaming ? { card: cardOf() } : {});
      const garbage: Answer = (_call, res) =>
        streaming
          ? res.writeHead(200, { 'content-type': 'text/event-stream' }).end('data: {"jsonrpc": "2.0", "res\n\n')
          : res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc": "2.0", "res');
      hostile.answer = { SendMessage: garbage, SendStreamingMessage: garbage };
      const { task, messageId } = await sendAndSettle(bridged, `garbage ${streaming}`);
      expect(task.status.state).toBe('failed');
      expect(reasonOf(task)).toBe(
        'The upstream agent accepted the message, but its answer could not be understood; the message is not sent again.',
      );
      // Past the whole retry schedule: still once.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(sendsOf(messageId)).toBe(1);
    });
  });

  it('a Task snapshot mid-stream is applied like the events it summarizes, repeating none of them', async () => {
    const bridged = await bridge({ card: cardOf() });
    const snap = { ...ids, id: 'up-snap', contextId: 'up-snap-ctx' };
    hostile.answer = {
      SendStreamingMessage: (call, res) =>
        sse(res, call, [
          { task: { ...snap, status: status('TASK_STATE_SUBMITTED') } },
          { statusUpdate: { ...snap, status: status('TASK_STATE_WORKING', 'thinking', 'w1') } },
          { artifactUpdate: { ...snap, artifact: { artifactId: 'out', parts: [{ text: 'Hel' }] } } },
          { artifactUpdate: { ...snap, append: true, artifact: { artifactId: 'out', parts: [{ text: 'lo' }] } } },
          {
            task: {
              ...snap,
              status: status('TASK_STATE_COMPLETED', 'done', 'd1'),
              history: [
                { messageId: call.params.message!.messageId, role: 'ROLE_USER', parts: [{ text: 'snapshots' }] },
                { messageId: 'w1', role: 'ROLE_AGENT', parts: [{ text: 'thinking' }] },
                { messageId: 'n1', role: 'ROLE_AGENT', parts: [{ text: 'a note' }] },
              ],
              artifacts: [{ artifactId: 'out', parts: [{ text: 'Hel' }, { text: 'lo' }] }],
            },
          },
        ]),
    };
    const { task, messageId } = await sendAndSettle(bridged, 'snapshots');
    expect(task.status.state).toBe('completed');
    expect(reasonOf(task)).toBe('done');
    expect(task.artifacts).toEqual([
      expect.objectContaining({
        artifactId: 'out',
        parts: [expect.objectContaining({ text: 'Hel' }), expect.objectContaining({ text: 'lo' })],
      }),
    ]);
    const texts = (task.history ?? []).filter((m) => m.role === 'agent').map((m) => m.parts[0].text);
    expect(texts).toEqual(['thinking', 'a note', 'done']);
    expect(await eventsOf('up-snap', 'artifact')).toBe(2);
    expect(sendsOf(messageId)).toBe(1);
    expect(hostile.calls.filter((call) => call.method === 'GetTask')).toEqual([]);
  });

  it('reads Server-Sent Events whose data lines start with U+001E', async () => {
    const bridged = await bridge({ card: cardOf() });
    const rs = { id: 'up-rs', contextId: 'up-rs-ctx' };
    hostile.answer = {
      SendStreamingMessage: (call, res) =>
        sse(
          res,
          call,
          [
            { task: { ...rs, status: status('TASK_STATE_SUBMITTED') } },
            { statusUpdate: { ...rs, status: status('TASK_STATE_COMPLETED', 'separated') } },
          ],
          '\u001e',
        ),
    };
    const { task, messageId } = await sendAndSettle(bridged, 'record separator');
    expect(task.status.state).toBe('completed');
    expect(reasonOf(task)).toBe('separated');
    expect(sendsOf(messageId)).toBe(1);
  });

  it('reads an A2A 0.3 result without kind when its shape says Task or Message', async () => {
    const bridged = await bridge({ version: '0.3' });
    hostile.answer = {
      'message/send': result({
        id: 'up-kindless',
        contextId: 'up-kindless-ctx',
        status: {
          state: 'completed',
          message: { kind: 'message', messageId: 'k1', role: 'agent', parts: [{ kind: 'text', text: 'a task' }] },
        },
        history: [],
      }),
    };
    const asTask = await sendAndSettle(bridged, 'kindless task');
    expect(asTask.task.status.state).toBe('completed');
    expect(reasonOf(asTask.task)).toBe('a task');

    hostile.answer = {
      'message/send': result({ messageId: 'k2', role: 'agent', parts: [{ kind: 'text', text: 'a message' }] }),
    };
    const asMessage = await sendAndSettle(bridged, 'kindless message');
    expect(asMessage.task.status.state).toBe('completed');
    expect(reasonOf(asMessage.task)).toBe('a message');
    expect(sendsOf(asMessage.messageId)).toBe(1);
  });

  it('takes a card whose interfaces name no protocolVersion: the first interface the forwarder speaks, as A2A 1.0', async () => {
    const bridged = await enabledAgent(t, acme);
    hostile.card = {
      ...cardOf(),
      supportedInterfaces: [
        { url: 'https://example.test/ws', protocolBinding: 'WEBSOCKET' },
        { url: hostile.url, protocolBinding: 'JSONRPC' },
      ],
    };
    const set = await t
      .http()
      .put(`/api/v1/identities/${bridged.handle}/upstream`)
      .set(bearer(acme))
      .send({ url: hostile.url, card_url: hostile.cardUrl })
      .expect(200);
    expect(set.body).toMatchObject({ url: hostile.url, protocol_version: '1.0', binding: 'JSONRPC', streaming: true });
  });

  it('forwards to an upstream shaped as VoltAgent’s A2A server: a 0.3 card without protocolVersion, kind-less Task snapshots behind U+001E', async () => {
    const bridged = await bridge({
      card: {
        name: 'support',
        description: 'VoltAgent',
        url: hostile.url,
        version: '0.1.0',
        capabilities: { streaming: true, pushNotifications: false, stateTransitionHistory: false },
        defaultInputModes: ['text'],
        defaultOutputModes: ['text'],
        skills: [{ id: 'support', name: 'support', tags: ['support'] }],
      },
    });
    const record = (state: string, text?: string) => ({
      id: 'up-volt',
      contextId: 'up-volt-ctx',
      status: {
        state,
        timestamp: new Date().toISOString(),
        ...(text === undefined
          ? {}
          : { message: { kind: 'message', role: 'agent', messageId: 'v1', parts: [{ kind: 'text', text }] } }),
      },
      history:
        text === undefined
          ? []
          : [{ kind: 'message', role: 'agent', messageId: 'v1', parts: [{ kind: 'text', text }] }],
    });
    hostile.answer = {
      'message/stream': (call, res) =>
        sse(
          res,
          call,
          [
            record('working'),
            record('working', ''),
            record('working', 'Hello'),
            record('working', 'Hello world'),
            record('completed', 'Hello world'),
          ],
          '\u001e',
        ),
    };
    const { task, messageId } = await sendAndSettle(bridged, 'volt');
    expect(task.status.state).toBe('completed');
    expect(reasonOf(task)).toBe('Hello world');
    expect(sendsOf(messageId)).toBe(1);
    expect(hostile.calls.filter((call) => call.method === 'tasks/get')).toEqual([]);
  });

  describe.each([false, true])('an A2A error in the answer (streaming: %s)', (streaming) => {
    it('is a refusal: the task fails at once, quoting it, and the message is not sent again', async () => {
      const bridged = await bridge(streaming ? { card: cardOf() } : {});
      const error = { code: -32603, message: 'No capacity for this today' };
      const refuse: Answer = (call, res) =>
        streaming
          ? res
              .writeHead(200, { 'content-type': 'text/event-stream' })
              .end(`data: ${JSON.stringify({ jsonrpc: '2.0', id: call.id, error })}\n\n`)
          : json(res, { jsonrpc: '2.0', id: call.id, error });
      hostile.answer = { SendMessage: refuse, SendStreamingMessage: refuse };
      const { task, messageId } = await sendAndSettle(bridged, `refused ${streaming}`);
      expect(task.status.state).toBe('failed');
      expect(reasonOf(task)).toBe('The upstream agent refused the message: No capacity for this today.');
      // Past the whole retry schedule: no retry, so still once.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(sendsOf(messageId)).toBe(1);
    });
  });

  it('a stream that ends at once, naming no task: the message is accepted, not sent again, and the task fails', async () => {
    const bridged = await bridge({ card: cardOf() });
    hostile.answer = { SendStreamingMessage: (call, res) => sse(res, call, []) };
    const { task, messageId } = await sendAndSettle(bridged, 'silent stream');
    expect(task.status.state).toBe('failed');
    expect(reasonOf(task)).toBe(
      'The upstream agent accepted the message, but its stream ended at once; the message is not sent again.',
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(sendsOf(messageId)).toBe(1);
  });

  it('an upstream that took the message, then fails every read of its task, stopped answering: it is never said to be unreachable', async () => {
    const bridged = await bridge();
    hostile.answer = {
      SendMessage: result({ task: { id: 'up-gone', contextId: 'up-gone-ctx', status: status('TASK_STATE_WORKING') } }),
      GetTask: (_call, res) => res.writeHead(503).end(),
    };
    const { task, messageId } = await sendAndSettle(bridged, 'then silence');
    expect(task.status.state).toBe('failed');
    expect(reasonOf(task)).toBe('The upstream agent stopped answering: it answered HTTP 503.');
    expect(sendsOf(messageId)).toBe(1);
    expect(hostile.calls.filter((call) => call.method === 'GetTask' && call.params.id === 'up-gone').length).toBe(4);
  });

  it("shows the upstream's own task ids to the worker's organization and the worker's key, never to the requester", async () => {
    // The requester in another organization, so that each side's view can be told apart.
    const globex = await signup(t, 'Globex');
    const outsider = await enabledAgent(t, globex);
    const bridged = await bridge();
    await t
      .http()
      .post('/api/v1/contact-rules')
      .set(bearer(acme))
      .send({
        identity: bridged.handle,
        direction: 'inbound',
        action: 'allow',
        peer: { type: 'identity', handle: outsider.handle },
      })
      .expect(201);
    await t
      .http()
      .post('/api/v1/contact-rules')
      .set(bearer(globex))
      .send({
        identity: outsider.handle,
        direction: 'outbound',
        action: 'allow',
        peer: { type: 'identity', handle: bridged.handle },
      })
      .expect(201);
    hostile.answer = {
      SendMessage: result({
        task: { id: 'up-seen', contextId: 'up-seen-ctx', status: status('TASK_STATE_COMPLETED', 'ok') },
      }),
    };
    const sent = await rpc(t, bridged.handle, outsider.key, 'message/send', { message: v03Message('ids') });
    expect(sent.status).toBe(200);
    const taskId = sent.body.result?.id as string;
    expect(taskId).toBeDefined();
    await eventually(
      () =>
        t
          .http()
          .get(`/api/v1/tasks/${taskId}`)
          .set(apiKey(outsider.key))
          .then((r) => r.body.status.state as string),
      (state) => state === 'completed',
    );
    const ids = { upstream_task_id: 'up-seen', upstream_context_id: 'up-seen-ctx' };
    const admin = await mintAdminKey(t, acme);
    for (const worker of [bearer(acme), apiKey(admin), apiKey(bridged.key)]) {
      const view = await t.http().get(`/api/v1/tasks/${taskId}`).set(worker).expect(200);
      expect(view.body).toMatchObject(ids);
      const list = await t.http().get(`/api/v1/tasks?role=worker`).set(worker).expect(200);
      expect(list.body.tasks.find((task: { id: string }) => task.id === taskId)).toMatchObject(ids);
    }
    for (const requesterSide of [bearer(globex), apiKey(outsider.key)]) {
      const view = await t.http().get(`/api/v1/tasks/${taskId}`).set(requesterSide).expect(200);
      expect(view.body).not.toHaveProperty('upstream_task_id');
      expect(view.body).not.toHaveProperty('upstream_context_id');
      const list = await t.http().get(`/api/v1/tasks`).set(requesterSide).expect(200);
      expect(JSON.stringify(list.body)).not.toContain('up-seen');
    }
  });
});
