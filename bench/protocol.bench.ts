import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { AgentCard, parseSseStream, TaskState } from '@a2a-js/sdk';
import {
  AgentEvent,
  DefaultRequestHandler,
  InMemoryTaskStore,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from '@a2a-js/sdk/server';
import { jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import {
  inTurns,
  load,
  ROUND_TRIP_WARM_UP,
  startBenchServer,
  table,
  timeInTurns,
  TURN,
  type LoadResult,
  type Timing,
} from './lib';

/**
 * Issue 5: the protocol endpoint.
 * (a) non-blocking sends per second through the whole path — authentication,
 *     admission, persistence (a task, a context, a message, an event per send);
 * (b) the round trip a requester waits for: send over a stream → the worker replies
 *     through REST → the requester's stream sees `completed`, p50/p99.
 * The reference: @a2a-js/sdk's own in-memory sample server (DefaultRequestHandler,
 * InMemoryTaskStore, an AgentExecutor that completes at once, the SDK's express
 * JSON-RPC handler, no authentication) on a loopback port, measured the same way —
 * there "the worker" is the in-process executor, so its round trip has no reply leg.
 *
 * Both are interleaved with the reference, so drift on a shared machine hits both
 * alike: the sends in BENCH_ROUNDS rounds (default 4) of BENCH_DURATION seconds
 * (default 10) each, the two servers alternating and the order flipped each round
 * (`inTurns`), the SDK server started afresh for each of its rounds (its tasks stay in
 * memory, in this process); the round trips (BENCH_ITERATIONS each, default 300) in
 * turns (`timeInTurns`), after ROUND_TRIP_WARM_UP of each (the sends do not run most
 * of a round trip's code: the stream, the REST reply, the wake-up). The send ratios are
 * of the rounds' means: req/s, and p99 (the mean of the rounds' p99).
 */
export async function run(): Promise<void> {
  const duration = Number(process.env.BENCH_DURATION ?? 10);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 4);
  const iterations = Number(process.env.BENCH_ITERATIONS ?? 300);
  const server = await startBenchServer();
  try {
    const { requester, worker } = await agentPair(server.baseUrl, server.db);
    const ours = `${server.baseUrl}/a2a/${worker.handle}`;
    const body = { method: 'POST' as const, body: sendBody(), idReplacement: true };
    const drive = {
      ours: (seconds: number) =>
        load('this service: message/send, non-blocking', {
          ...body,
          url: ours,
          headers: { 'content-type': 'application/json', 'x-api-key': requester.key },
          duration: seconds,
        }),
      reference: async (seconds: number) => {
        const reference = await startReferenceServer();
        try {
          return await load('SDK sample server: message/send, non-blocking', {
            ...body,
            url: reference.url,
            headers: { 'content-type': 'application/json' },
            duration: seconds,
          });
        } finally {
          await reference.close();
        }
      },
    };
    type Side = keyof typeof drive;
    const sides: Side[] = ['ours', 'reference'];

    for (const side of sides) {
      await drive[side](2);
    }
    const sends: Record<Side, LoadResult[]> = { ours: [], reference: [] };
    const [{ before }] = await server.db.query(`SELECT count(*)::int AS before FROM tasks`);
    await inTurns(rounds, sides, async (side) => void sends[side].push(await drive[side](duration)), 1);
    const [{ after }] = await server.db.query(`SELECT count(*)::int AS after FROM tasks`);

    const reference = await startReferenceServer();
    let trips: Record<Side, Timing>;
    try {
      trips = await timeInTurns(
        iterations,
        {
          ours: async () => {
            const events = await stream(ours, requester.key);
            await replyCompleted(server.baseUrl, worker.key, await firstTaskId(events));
            await untilCompleted(events);
          },
          reference: async () => untilCompleted(await stream(reference.url)),
        },
        ROUND_TRIP_WARM_UP,
      );
    } finally {
      await reference.close();
    }

    const row = (result: LoadResult, round: number) => ({
      measure: `${result.name} (round ${round + 1})`,
      'req/s': Math.round(result.requestsPerSecond),
      'p50 ms': result.p50,
      'p99 ms': result.p99,
      errors: result.errors + result.non2xx,
    });
    const tripRow = (measure: string, { p50, p99 }: Timing) => ({
      measure,
      'req/s': '',
      'p50 ms': p50,
      'p99 ms': p99,
      errors: 0,
    });
    table([
      ...sends.ours.map(row),
      ...sends.reference.map(row),
      tripRow('this service: stream → REST reply → completed', trips.ours),
      tripRow('SDK sample server: stream → completed', trips.reference),
    ]);
    const mean = (list: LoadResult[], of: (r: LoadResult) => number) =>
      list.reduce((sum, r) => sum + of(r), 0) / list.length;
    const ratio = (of: (r: LoadResult) => number) =>
      `${(mean(sends.ours, of) / mean(sends.reference, of)).toFixed(2)}× the SDK server's (per round: ` +
      `${sends.ours.map((r, i) => (of(r) / of(sends.reference[i])).toFixed(2)).join(', ')})`;
    const throughput = (r: LoadResult) => r.requestsPerSecond;
    console.log(
      `\nsends over ${rounds} rounds: this service ${Math.round(mean(sends.ours, throughput))} req/s, ` +
        `the SDK sample server ${Math.round(mean(sends.reference, throughput))} req/s in the mean: ` +
        `${ratio(throughput)}; mean p99 ${ratio((r) => r.p99)}`,
    );
    console.log(
      `tasks persisted during the send rounds: ${after - before} ` +
        `(${Math.round((after - before) / (rounds * duration))}/s); ` +
        `round trips: ${iterations} each, in turns of ${TURN} after ${ROUND_TRIP_WARM_UP} each to warm up (BENCH_WARM_UP)`,
    );
  } finally {
    await server.close();
  }
}

/** A requester and a worker in one organization, each with its agent key (also used by the events benchmark). */
export async function agentPair(
  baseUrl: string,
  db: { query: (sql: string, params?: unknown[]) => Promise<any> },
  prefix = 'bench',
) {
  const post = (path: string, body: unknown, auth: Record<string, string> = {}) =>
    fetch(baseUrl + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth },
      body: JSON.stringify(body),
    }).then((r) => r.json() as Promise<any>);
  const signup = await post('/api/v1/console/signup', {
    organization_name: 'Bench',
    email: `bench-${randomUUID()}@example.test`,
    password: 'correct horse battery staple',
  });
  const agent = async (handle: string) => {
    // Identities straight into the table: the identities API is not what is measured here.
    const [{ id }] = await db.query(
      `INSERT INTO identities (agent_handle, organization_id, claimed_at, enabled) VALUES ($1, $2, now(), true) RETURNING id`,
      [handle, signup.organization.id],
    );
    const minted = await post(
      '/api/v1/api-keys',
      { scope: 'agent', scoped_identity_id: id },
      { authorization: `Bearer ${signup.token}` },
    );
    return { handle, key: minted.key as string };
  };
  return { requester: await agent(`${prefix}-requester`), worker: await agent(`${prefix}-worker`) };
}

/**
 * A non-blocking `message/send` (v0.3) body. By default its message id is autocannon's
 * `[<id>]`, replaced per request (`idReplacement`).
 */
export function sendBody(messageId = '[<id>]'): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'message/send',
    params: {
      message: { kind: 'message', role: 'user', messageId, parts: [{ kind: 'text', text: 'benchmark' }] },
      configuration: { blocking: false },
    },
  });
}

/** Opens `message/stream` and returns its SSE events (also used by the round-trip benchmark). */
export async function stream(url: string, key?: string) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...(key ? { 'x-api-key': key } : {}) },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'message/stream',
      params: {
        message: {
          kind: 'message',
          role: 'user',
          messageId: randomUUID(),
          parts: [{ kind: 'text', text: 'round trip' }],
        },
      },
    }),
  });
  if (!response.ok) {
    throw new Error(`stream failed: ${response.status}`);
  }
  return parseSseStream(response);
}

/** The id of the task a stream's first event carries. */
export async function firstTaskId(events: AsyncGenerator<{ data: string }>): Promise<string> {
  const first = await events.next();
  if (first.done) {
    throw new Error('the stream ended before its first event');
  }
  return (JSON.parse(first.value.data) as { result: { id: string } }).result.id;
}

/** The worker's REST reply that completes the task: the round trip's middle leg. */
export async function replyCompleted(baseUrl: string, workerKey: string, taskId: string): Promise<void> {
  const replied = await fetch(`${baseUrl}/api/v1/tasks/${taskId}/reply`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': workerKey },
    body: JSON.stringify({ state: 'completed' }),
  });
  if (replied.status !== 200) {
    throw new Error(`reply failed: ${replied.status}`);
  }
  await replied.arrayBuffer();
}

/** Reads the stream until its task is `completed`. */
export async function untilCompleted(events: AsyncGenerator<{ data: string }>): Promise<void> {
  for await (const event of events) {
    if (
      (JSON.parse(event.data) as { result?: { status?: { state?: string } } }).result?.status?.state === 'completed'
    ) {
      return;
    }
  }
  throw new Error('the stream ended before the task completed');
}

/** @a2a-js/sdk's in-memory sample server: an executor that completes every task at once. */
export async function startReferenceServer(): Promise<{ url: string; close: () => Promise<void> }> {
  const executor: AgentExecutor = {
    async execute(context: RequestContext, bus: ExecutionEventBus) {
      const ids = { taskId: context.taskId, contextId: context.contextId };
      if (!context.task) {
        bus.publish(
          AgentEvent.task({
            id: context.taskId,
            contextId: context.contextId,
            history: [context.userMessage],
            artifacts: [],
            metadata: undefined,
            status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: new Date().toISOString() },
          }),
        );
      }
      bus.publish(
        AgentEvent.statusUpdate({
          ...ids,
          metadata: undefined,
          status: { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp: new Date().toISOString() },
        }),
      );
      bus.finished();
    },
    async cancelTask() {},
  };
  const app = express();
  const http = await new Promise<import('node:http').Server>((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/`;
  const card = AgentCard.fromJSON({
    name: 'reference',
    description: 'SDK sample',
    version: '1',
    supportedInterfaces: [
      { url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
    ],
    capabilities: { streaming: true },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [],
  });
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
  app.use(
    '/',
    jsonRpcHandler({
      requestHandler: handler,
      userBuilder: UserBuilder.noAuthentication,
      legacyCompat: { enabled: true },
    }),
  );
  return { url, close: () => new Promise((resolve) => http.close(() => resolve())) };
}
