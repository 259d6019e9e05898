import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { startApp, type TestApp } from '../support/app';
import { enabledAgent, rpc, v03Message, type Agent } from '../support/a2a';
import { eventually } from '../support/eventually';
import { apiKey, bearer, signup, type ConsoleAccount } from '../support/fixtures';
import { freePort } from '../support/server-process';
import { startUpstreamAgent, type UpstreamAgent } from '../support/upstream-agent';

/**
 * An upstream that holds whatever it is given (A2A 0.3 JSON-RPC, written by hand): a
 * message starting with "drip" gets response headers and then a space every 100 ms,
 * never a whole answer; "never" gets a working task that stays working at every
 * `tasks/get`; over `message/stream`, the task and a working status, then SSE comments
 * every 100 ms, forever. It records every call and answers a cancel.
 */
async function startHostileUpstream() {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const calls: Array<{ method: string; taskId: string | null; at: number }> = [];
  const cancels: string[] = [];
  const open = new Set<string>();
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let tasks = 0;

  const task = (id: string, state: string) => ({
    kind: 'task',
    id,
    contextId: `ctx-${id}`,
    status: { state, timestamp: new Date().toISOString() },
  });
  const state = { dripCancels: false, peakCancels: 0 };
  const drip = (res: ServerResponse, chunk: string, label: string) => {
    open.add(label);
    state.peakCancels = Math.max(state.peakCancels, [...open].filter((l) => l.startsWith('cancel ')).length);
    const timer = setInterval(() => res.write(chunk), 100);
    timers.add(timer);
    res.on('close', () => {
      clearInterval(timer);
      timers.delete(timer);
      open.delete(label);
    });
  };
  const card = {
    name: 'Hostile',
    description: 'Holds on to everything.',
    version: '1.0.0',
    url: `${base}/a2a`,
    protocolVersion: '0.3.0',
    preferredTransport: 'JSONRPC',
    capabilities: { streaming: true },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'hold', name: 'Hold', description: 'Holds.', tags: ['hold'] }],
  };

  const handle = (req: IncomingMessage, res: ServerResponse, body: string) => {
    if (req.method === 'GET') {
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(card));
    }
    const call = JSON.parse(body) as { id: number; method: string; params: Record<string, unknown> };
    const text = ((call.params.message as { parts?: Array<{ text?: string }> })?.parts ?? [])
      .map((part) => part.text ?? '')
      .join('');
    const taskId = (call.params.id as string | undefined) ?? null;
    calls.push({ method: call.method, taskId, at: Date.now() });
    const answer = (result: unknown) =>
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id: call.id, result }));
    switch (call.method) {
      case 'message/send': {
        const id = `up-${++tasks}`;
        if (text.startsWith('drip')) {
          res.writeHead(200, { 'content-type': 'application/json' });
          return drip(res, ' ', `send ${id}`);
        }
        return answer(task(id, 'working'));
      }
      case 'message/stream': {
        const id = `up-${++tasks}`;
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        const frame = (result: unknown) =>
          res.write(`data: ${JSON.stringify({ jsonrpc: '2.0', id: call.id, result })}\n\n`);
        frame(task(id, 'submitted'));
        frame({
          kind: 'status-update',
          taskId: id,
          contextId: `ctx-${id}`,
          status: { state: 'working' },
          final: false,
        });
        return drip(res, ': still here\n\n', `stream ${id}`);
      }
      case 'tasks/get':
        return answer(task(taskId ?? '', 'working'));
      case 'tasks/cancel':
        cancels.push(taskId ?? '');
        if (state.dripCancels) {
          res.writeHead(200, { 'content-type': 'application/json' });
          return drip(res, ' ', `cancel ${taskId}`);
        }
        return answer(task(taskId ?? '', 'canceled'));
      default:
        return answer(null);
    }
  };

  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => handle(req, res, body));
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `${base}/a2a`,
    cardUrl: `${base}/.well-known/agent-card.json`,
    calls,
    cancels,
    /** The answers still being dripped (a send's, a stream's, a cancel's), by upstream task id. */
    open,
    /** `dripCancels`: cancels are answered by a drip too; `peakCancels`: the most dripped at once. */
    state,
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) {
          clearInterval(timer);
        }
        for (const socket of sockets) {
          socket.destroy();
        }
        server.close(() => resolve());
      }),
  };
}

type Hostile = Awaited<ReturnType<typeof startHostileUpstream>>;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function bridge(t: TestApp, account: ConsoleAccount, body: Record<string, unknown>): Promise<Agent> {
  const agent = await enabledAgent(t, account);
  await t.http().put(`/api/v1/identities/${agent.handle}/upstream`).set(bearer(account)).send(body).expect(200);
  return agent;
}

async function sendNonBlocking(t: TestApp, requester: Agent, worker: Agent, text: string): Promise<string> {
  const res = await rpc(t, worker.handle, requester.key, 'message/send', {
    message: v03Message(text),
    configuration: { blocking: false },
  }).expect(200);
  return res.body.result.id as string;
}

const taskOf = (t: TestApp, requester: Agent, taskId: string) =>
  t
    .http()
    .get(`/api/v1/tasks/${taskId}`)
    .set(apiKey(requester.key))
    .then((r) => r.body as { status: { state: string; message?: { parts: Array<{ text: string }> } } });

/** The upstream's id of the task, once the forwarder has recorded it (and, given `state`, once the task is in it). */
async function upstreamTaskIdOf(t: TestApp, taskId: string, state?: string): Promise<string> {
  const row = await eventually(
    async () =>
      (
        (await t.db.query(`SELECT state, upstream_task_id FROM tasks WHERE id = $1`, [taskId])) as Array<{
          state: string;
          upstream_task_id: string | null;
        }>
      )[0],
    (found) => found.upstream_task_id !== null && (state === undefined || found.state === state),
  );
  return row.upstream_task_id!;
}

describe('a hostile upstream', () => {
  let hostile: Hostile;
  let echo: UpstreamAgent;

  beforeAll(async () => {
    hostile = await startHostileUpstream();
    echo = await startUpstreamAgent(await freePort());
  });
  afterAll(async () => {
    await hostile.close();
    await echo.close();
  });

  /** A new identity bridged to the hostile upstream by hand (A2A 0.3 JSON-RPC, no card: not streaming). */
  const bridgeHostile = (t: TestApp, account: ConsoleAccount) =>
    bridge(t, account, { url: hostile.url, protocol_version: '0.3', binding: 'JSONRPC' });

  describe('holding 20 forwards of one organization', () => {
    let t: TestApp;

    beforeAll(async () => {
      t = await startApp({
        WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true',
        EVENTS_POLL_INTERVAL_MS: '50',
        // The hostile forwards stay held for the whole test: only the shares protect the others.
        UPSTREAM_FORWARD_MAX_MS: '600000',
        UPSTREAM_IDLE_TIMEOUT_MS: '600000',
        // A send the forwarder never takes up answers `submitted` after this long.
        PROTOCOL_BLOCKING_TIMEOUT_MS: '5000',
      });
    });
    afterAll(() => t.close());

    it("cannot move another organization's forwarded send p50 by more than 1 s", async () => {
      const quiet = await signup(t, 'Quiet');
      const quietRequester = await enabledAgent(t, quiet);
      const quietWorker = await bridge(t, quiet, { url: echo.url, card_url: echo.cardUrl });
      const measure = async () => {
        const durations: number[] = [];
        for (let i = 0; i < 5; i++) {
          const started = Date.now();
          const res = await rpc(t, quietWorker.handle, quietRequester.key, 'message/send', {
            message: v03Message(`hello ${i}`),
          }).expect(200);
          durations.push(Date.now() - started);
          expect(res.body.result.status.state).toBe('completed');
        }
        return median(durations);
      };
      const before = await measure();

      const noisy = await signup(t, 'Noisy');
      const noisyRequester = await enabledAgent(t, noisy);
      const noisyWorker = await bridgeHostile(t, noisy);
      // Sent all at once: the sends that commit together take no more than the share either.
      await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          sendNonBlocking(t, noisyRequester, noisyWorker, i % 2 === 0 ? `drip ${i}` : `never ${i}`),
        ),
      );
      // The hostile upstream holds what it was given: its share of the forwarder's slots (10 of 20), no more.
      const sent = () => hostile.calls.filter((c) => c.method === 'message/send').length;
      await eventually(
        async () => sent(),
        (n) => n >= 10,
      );
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(sent()).toBe(10);

      const after = await measure();
      expect(after - before).toBeLessThanOrEqual(1_000);
    }, 60_000);
  });

  describe('with short bounds', () => {
    let t: TestApp;
    let acme: ConsoleAccount;
    let requester: Agent;

    beforeAll(async () => {
      t = await startApp({
        WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true',
        EVENTS_POLL_INTERVAL_MS: '50',
        UPSTREAM_FORWARD_MAX_MS: '3000',
        UPSTREAM_IDLE_TIMEOUT_MS: '1500',
        UPSTREAM_POLL_INTERVAL_MS: '100',
        UPSTREAM_POLL_MAX_INTERVAL_MS: '400',
      });
      acme = await signup(t, 'Acme');
      requester = await enabledAgent(t, acme);
    });
    afterAll(() => t.close());

    /** Sends `text` to a new bridged identity; the task once it failed, and its id. */
    async function sendUntilFailed(text: string) {
      const worker = await bridgeHostile(t, acme);
      const taskId = await sendNonBlocking(t, requester, worker, text);
      const failed = await eventually(
        () => taskOf(t, requester, taskId),
        (task) => task.status.state === 'failed',
        15_000,
      );
      return { taskId, reason: failed.status.message?.parts[0].text };
    }

    it('an answer dripped without end fails the task once the idle bound has passed, naming it', async () => {
      const { taskId, reason } = await sendUntilFailed('drip slowly');
      expect(reason).toBe('The upstream agent sent nothing for 1500 ms (UPSTREAM_IDLE_TIMEOUT_MS).');
      const [forward] = (await t.db.query(`SELECT status, attempts FROM upstream_forwards WHERE task_id = $1`, [
        taskId,
      ])) as Array<{ status: string; attempts: number }>;
      expect(forward).toEqual({ status: 'failed', attempts: 1 });
    }, 20_000);

    it('a task that never finishes fails once the total bound has passed, naming it', async () => {
      const { reason } = await sendUntilFailed('never ending');
      expect(reason).toBe('The upstream agent did not finish within 3000 ms (UPSTREAM_FORWARD_MAX_MS).');
    }, 20_000);

    it('a cancel is forwarded, then the forward ends and frees its slot', async () => {
      const worker = await bridge(t, acme, { url: hostile.url, card_url: hostile.cardUrl });
      const taskId = await sendNonBlocking(t, requester, worker, 'stream forever');
      const upstreamTaskId = await upstreamTaskIdOf(t, taskId, 'working');
      expect(hostile.open.has(`stream ${upstreamTaskId}`)).toBe(true);
      await rpc(t, worker.handle, requester.key, 'tasks/cancel', { id: taskId })
        .expect(200)
        .expect((r) => expect(r.body.result.status.state).toBe('canceled'));
      // Well within the idle bound: the cancel ended the forward, not the bound.
      await eventually(
        async () => hostile.cancels,
        (cancels) => cancels.includes(upstreamTaskId),
        1_000,
      );
      const forward = await eventually(
        async () =>
          (
            (await t.db.query(`SELECT status FROM upstream_forwards WHERE task_id = $1 AND kind = 'message'`, [
              taskId,
            ])) as Array<{ status: string }>
          )[0],
        (row) => row.status !== 'pending',
        1_000,
      );
      expect(forward.status).toBe('succeeded');
      await eventually(
        async () => hostile.open.has(`stream ${upstreamTaskId}`),
        (held) => !held,
        1_000,
      );
    });
  });

  it("cancels have a share of their own: one organization's cancels to an upstream that holds them take 2 slots at most", async () => {
    const t = await startApp({
      WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true',
      EVENTS_POLL_INTERVAL_MS: '50',
      UPSTREAM_IDLE_TIMEOUT_MS: '1000',
    });
    try {
      const acme = await signup(t, 'Canceling');
      const requester = await enabledAgent(t, acme);
      const worker = await bridgeHostile(t, acme);
      const taskIds: string[] = [];
      for (let i = 0; i < 6; i++) {
        taskIds.push(await sendNonBlocking(t, requester, worker, `never ${i}`));
      }
      const rows = await eventually(
        async () =>
          (await t.db.query(`SELECT upstream_task_id FROM tasks WHERE id = ANY($1::uuid[])`, [taskIds])) as Array<{
            upstream_task_id: string | null;
          }>,
        (all) => all.every((row) => row.upstream_task_id !== null),
      );
      hostile.state.dripCancels = true;
      hostile.state.peakCancels = 0;
      await Promise.all(taskIds.map((id) => rpc(t, worker.handle, requester.key, 'tasks/cancel', { id }).expect(200)));
      // Every cancel reaches the upstream in turn (each held until the idle bound), never more than 2 at once.
      await eventually(
        async () => hostile.cancels,
        (cancels) => rows.every((row) => cancels.includes(row.upstream_task_id!)),
        15_000,
      );
      expect(hostile.state.peakCancels).toBeLessThanOrEqual(2);
    } finally {
      hostile.state.dripCancels = false;
      await t.close();
    }
  }, 30_000);

  it('a forward ended by another instance (its task canceled there) stops at its next lease renewal', async () => {
    const t = await startApp({ WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true', UPSTREAM_LEASE_MS: '1500' });
    try {
      const acme = await signup(t, 'Leased');
      const requester = await enabledAgent(t, acme);
      const worker = await bridge(t, acme, { url: hostile.url, card_url: hostile.cardUrl });
      const taskId = await sendNonBlocking(t, requester, worker, 'stream on');
      const upstreamTaskId = await upstreamTaskIdOf(t, taskId);
      expect(hostile.open.has(`stream ${upstreamTaskId}`)).toBe(true);
      // What another instance's forwarded cancel does to the task's message forwards.
      await t.db.query(
        `UPDATE upstream_forwards SET status = 'succeeded', in_flight = false, next_attempt_at = NULL
          WHERE task_id = $1 AND kind = 'message'`,
        [taskId],
      );
      // The lease is renewed every 500 ms: the forward finds its claim gone and lets go of the upstream.
      await eventually(
        async () => hostile.open.has(`stream ${upstreamTaskId}`),
        (held) => !held,
        2_000,
      );
    } finally {
      await t.close();
    }
  });

  it('polls an upstream task with backoff: a few GetTask calls in 6 s, further and further apart', async () => {
    const t = await startApp({
      WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true',
      EVENTS_POLL_INTERVAL_MS: '50',
      UPSTREAM_POLL_MAX_INTERVAL_MS: '4000',
    });
    try {
      const acme = await signup(t, 'Polled');
      const requester = await enabledAgent(t, acme);
      const worker = await bridgeHostile(t, acme);
      const taskId = await sendNonBlocking(t, requester, worker, 'never mind');
      const upstreamTaskId = await upstreamTaskIdOf(t, taskId);
      const started = Date.now();
      await new Promise((resolve) => setTimeout(resolve, 6_000));
      const polls = hostile.calls.filter((c) => c.method === 'tasks/get' && c.taskId === upstreamTaskId);
      const inWindow = polls.filter((c) => c.at >= started && c.at < started + 6_000);
      // Every 500 ms without backoff: 12.
      expect(inWindow.length).toBeLessThanOrEqual(6);
      const gaps = polls.slice(1).map((c, i) => c.at - polls[i].at);
      expect(gaps.length).toBeGreaterThanOrEqual(3);
      expect(gaps[gaps.length - 1]).toBeGreaterThan(2 * gaps[0]);
    } finally {
      await t.close();
    }
  }, 20_000);
});
