import { randomUUID } from 'node:crypto';
import { cpuTimeMs, inTurns, percentile, repeat, ROUND_TRIP_WARM_UP, startBenchServer, table, TURN } from './lib';
import {
  agentPair,
  firstTaskId,
  replyCompleted,
  sendBody,
  startReferenceServer,
  stream,
  untilCompleted,
} from './protocol.bench';

/**
 * Issue 13: where the stream → REST reply → completed round trip spends its time.
 * One round trip at a time, as the protocol benchmark times it, in three phases: the
 * stream's first event (the send has committed), the worker's REST reply answered,
 * the stream's `completed` after that. Then what a round trip costs: wall time, this
 * process's CPU (the server and the requester's and worker's fetch, user and system)
 * and PostgreSQL's, against the SDK sample server's round trip (stream → completed,
 * no reply leg; the two in turns, `inTurns`) and a `GET /healthz`, each one at a time.
 * Last, a non-blocking send's CPU one at a time against 32 at once: what a request
 * costs when the process has nothing else to do against when it is busy. (With BENCH_DATABASE=embedded, PGlite
 * runs in this process: its CPU is the process's, and the PostgreSQL column is 0.)
 * Everything else is timed after ROUND_TRIP_WARM_UP round trips of each server; the p50
 * and p99 of the freshly started ones (FRESH) are printed too: until V8 has optimized
 * the path's code, a round trip takes 1.5–2× as long.
 */
export async function run(): Promise<void> {
  const iterations = Number(process.env.BENCH_ITERATIONS ?? 300);
  const server = await startBenchServer();
  const reference = await startReferenceServer();
  try {
    const { requester, worker } = await agentPair(server.baseUrl, server.db, 'round-trip');
    const ours = `${server.baseUrl}/a2a/${worker.handle}`;

    const phases = { open: [] as number[], reply: [] as number[], completed: [] as number[], total: [] as number[] };
    const roundTrip = async (record: boolean) => {
      const started = now();
      const events = await stream(ours, requester.key);
      const taskId = await firstTaskId(events);
      const opened = now();
      await replyCompleted(server.baseUrl, worker.key, taskId);
      const answered = now();
      await untilCompleted(events);
      const completed = now();
      if (!record) {
        return;
      }
      phases.open.push(opened - started);
      phases.reply.push(answered - opened);
      phases.completed.push(completed - answered);
      phases.total.push(completed - started);
    };
    const referenceTimes: number[] = [];
    const referenceTrip = async (record: boolean) => {
      const started = now();
      await untilCompleted(await stream(reference.url));
      if (record) {
        referenceTimes.push(now() - started);
      }
    };
    const trips = { ours: roundTrip, reference: referenceTrip };
    const sides = ['ours', 'reference'] as const;
    // The warm-up, in turns as the timed round trips below are (without their pause
    // before each turn), each side's round trips FRESH timed: the freshly started figures.
    const fresh = { ours: [] as number[], reference: [] as number[] };
    const warmed = { ours: 0, reference: 0 };
    await inTurns(ROUND_TRIP_WARM_UP, sides, async (side, count) => {
      for (let i = 0; i < count; i++) {
        const started = now();
        await trips[side](false);
        const n = warmed[side]++;
        if (n >= FRESH.from && n < FRESH.to) {
          fresh[side].push(now() - started);
        }
      }
    });
    // In turns (inTurns), so drift on a shared machine hits both alike; each side's cost
    // is summed over its turns.
    const costs = { ours: new Cost(), reference: new Cost() };
    await inTurns(iterations, sides, (side, count) =>
      costs[side].add(count, () => repeat(count, () => trips[side](true))),
    );
    const ourCost = costs.ours.each();
    const referenceCost = costs.reference.each();

    const health = async () => void (await (await fetch(`${server.baseUrl}/healthz`)).arrayBuffer());
    await repeat(200, health);
    const healthCost = await costOf(2000, () => repeat(2000, health));

    const send = async () => {
      const response = await fetch(ours, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': requester.key },
        body: sendBody(randomUUID()),
      });
      if (response.status !== 200) {
        throw new Error(`send failed: ${response.status}`);
      }
      await response.arrayBuffer();
    };
    await repeat(300, send);
    const serialSends = await costOf(1000, () => repeat(1000, send));
    const concurrentSends = await costOf(4000, () =>
      Promise.all(Array.from({ length: 32 }, () => repeat(125, send))).then(() => undefined),
    );

    const p = (samples: number[], q: number) =>
      percentile(
        [...samples].sort((a, b) => a - b),
        q,
      );
    table([
      {
        phase: 'stream opened: the first event (the send committed)',
        'p50 ms': p(phases.open, 50),
        'p99 ms': p(phases.open, 99),
      },
      { phase: "the worker's REST reply answered", 'p50 ms': p(phases.reply, 50), 'p99 ms': p(phases.reply, 99) },
      {
        phase: 'the stream sees `completed` after the answer',
        'p50 ms': p(phases.completed, 50),
        'p99 ms': p(phases.completed, 99),
      },
      {
        phase: 'this service: stream → REST reply → completed',
        'p50 ms': p(phases.total, 50),
        'p99 ms': p(phases.total, 99),
      },
      {
        phase: 'SDK sample server: stream → completed',
        'p50 ms': p(referenceTimes, 50),
        'p99 ms': p(referenceTimes, 99),
      },
      ...(fresh.ours.length === 0
        ? []
        : [
            {
              phase: `this service, freshly started (its round trips ${FRESH.from + 1}–${FRESH.from + fresh.ours.length})`,
              'p50 ms': p(fresh.ours, 50),
              'p99 ms': p(fresh.ours, 99),
            },
            {
              phase: `SDK sample server, freshly started (the same)`,
              'p50 ms': p(fresh.reference, 50),
              'p99 ms': p(fresh.reference, 99),
            },
          ]),
    ]);
    console.log('');
    table([
      { each: 'round trip, this service', ...ourCost },
      { each: 'round trip, SDK sample server', ...referenceCost },
      { each: 'GET /healthz, one at a time', ...healthCost },
      { each: 'message/send (non-blocking), one at a time', ...serialSends },
      { each: 'message/send (non-blocking), 32 at once', ...concurrentSends },
    ]);
    console.log(
      `\nms each; "process" is this one process: the server and the fetch clients that drive it. ` +
        `${iterations} round trips each after ${ROUND_TRIP_WARM_UP} to warm up (BENCH_WARM_UP), ` +
        `the two servers in turns of ${TURN}.`,
    );
  } finally {
    await reference.close();
    await server.close();
  }
}

const now = () => Number(process.hrtime.bigint()) / 1e6;

/** The warm-up's round trips timed as "freshly started": after the first 50, 300 of them. */
const FRESH = { from: 50, to: 350 };

const SETTLE_MS = 50;

/**
 * Wall time and CPU (this process's user and system time, PostgreSQL's) summed over
 * stretches of work (`add`), then for each of their units (`each`).
 */
class Cost {
  private units = 0;
  private wall = 0;
  private user = 0;
  private system = 0;
  private postgres = 0;

  async add(units: number, work: () => Promise<void>): Promise<void> {
    // What ran before (the other side's PostgreSQL notifications and writes, a GC) settles first.
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    // PostgreSQL's first: reading it walks /proc, which is this process's CPU, not the work's.
    const postgres = cpuTimeMs('postgres');
    const usage = process.cpuUsage();
    const started = now();
    await work();
    const spent = process.cpuUsage(usage);
    this.wall += now() - started;
    this.user += spent.user / 1000;
    this.system += spent.system / 1000;
    this.postgres += cpuTimeMs('postgres') - postgres;
    this.units += units;
  }

  each(): Record<string, number> {
    return {
      'wall ms': this.wall / this.units,
      'process user': this.user / this.units,
      'process system': this.system / this.units,
      PostgreSQL: this.postgres / this.units,
    };
  }
}

/** The Cost of `work`, for each of its `units`. */
async function costOf(units: number, work: () => Promise<void>): Promise<Record<string, number>> {
  const cost = new Cost();
  await cost.add(units, work);
  return cost.each();
}
