import { Database } from '../src/database/database';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { DataSource } from 'typeorm';
import { DeliveryDispatcher } from '../src/events/delivery-dispatcher';
import { EventsService, type EventInput } from '../src/events/events.service';
import { LedgerEvents } from '../src/ledger/ledger-events';
import { load, percentile, startBenchServer, table, type BenchServer } from './lib';
import { agentPair, sendBody } from './protocol.bench';

/**
 * Issue 6: (1) events per second from commit to a loopback receiver's 2xx, with the
 * latency of each event over that path, and the rate at which one dispatcher drains
 * a backlog; (2) what the outbox write adds to the protocol send path (the event
 * rows and their fan-out, in the send's transaction).
 */
export async function run(): Promise<void> {
  await throughput();
  await outboxCost();
}

async function throughput(): Promise<void> {
  const events = Number(process.env.BENCH_EVENTS ?? 3000);
  const rows: Array<Record<string, string | number>> = [];
  for (const batch of [20, 50, 100]) {
    // 50 is the default
    const receiver = await startCountingReceiver();
    const server = await startBenchServer({
      WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true',
      EVENTS_BATCH_SIZE: String(batch),
    });
    try {
      const organizationId = await organizationWithWebhooks(server, [receiver.url]);
      const emitter = server.app.get(EventsService);
      const committedAt = new Map<string, number>();
      const emit = async (i: number) => {
        const event: EventInput = { type: 'task.status', organizationId, data: { n: i, state: 'working' } };
        const id = await server.app.get(Database).transaction((em) => emitter.emit(em, event));
        committedAt.set(id!, performance.now());
      };
      const burst = async () => {
        let next = 0;
        await Promise.all(
          Array.from({ length: 16 }, async () => {
            while (next < events) {
              await emit(next++);
            }
          }),
        );
      };
      // Warm-up, then a burst from 16 concurrent writers while the dispatcher delivers.
      await Promise.all(Array.from({ length: 100 }, (_, i) => emit(i)));
      await receiver.until(100);
      receiver.reset();
      committedAt.clear();
      const started = performance.now();
      await burst();
      const committed = performance.now();
      await receiver.until(events);
      const finished = performance.now();
      const latencies = [...receiver.arrivals].map(([id, at]) => at - committedAt.get(id)!).sort((a, b) => a - b);
      const duplicates = receiver.duplicates;

      // The dispatcher's own capacity: a backlog of the same size, delivered from a standing start.
      const dispatcher = server.app.get(DeliveryDispatcher);
      await dispatcher.stop();
      receiver.reset();
      await burst();
      const drainStarted = performance.now();
      dispatcher.start();
      await receiver.until(events);
      const drained = performance.now();
      rows.push({
        EVENTS_BATCH_SIZE: batch,
        events,
        'committed/s': Math.round(events / ((committed - started) / 1000)),
        'delivered/s (commit → 2xx)': Math.round(events / ((finished - started) / 1000)),
        'latency p50 ms': percentile(latencies, 50),
        'latency p99 ms': percentile(latencies, 99),
        'backlog drained/s': Math.round(events / ((drained - drainStarted) / 1000)),
        duplicates: duplicates + receiver.duplicates,
      });
    } finally {
      await server.close();
      await receiver.close();
    }
  }
  console.log('Delivery throughput: one webhook on a loopback receiver answering 204, one dispatcher in the server.\n');
  table(rows);
}

/**
 * The protocol send path (a non-blocking `message/send`: authentication, admission,
 * a task, a context, a message, a task event) with and without the outbox write
 * (`task.created` for each organization concerned, and its fan-out). The dispatcher
 * is off, so only the write is measured, not the sending.
 */
async function outboxCost(): Promise<void> {
  const duration = Number(process.env.BENCH_DURATION ?? 10);
  const iterations = Number(process.env.BENCH_ITERATIONS ?? 600);
  const rounds = 3;
  const server = await startBenchServer({ EVENTS_DISPATCHER: 'off' });
  try {
    const quiet = await agentPair(server.baseUrl, server.db, 'quiet');
    const busy = await agentPair(server.baseUrl, server.db, 'busy');
    const [{ organization }] = (await server.db.query(
      `SELECT organization_id AS organization FROM identities WHERE agent_handle = $1`,
      [busy.worker.handle],
    )) as Array<{ organization: string }>;
    await addWebhooks(server.db, organization, 3);
    const ledgerEvents = server.app.get(LedgerEvents);
    const emit = ledgerEvents.emit.bind(ledgerEvents);
    const variants = [
      { path: 'send, outbox write taken out', pair: quiet, emits: false },
      { path: 'send + task.created, no subscriber', pair: quiet, emits: true },
      { path: 'send + task.created → 3 deliveries', pair: busy, emits: true },
    ].map((variant) => ({
      ...variant,
      url: `${server.baseUrl}/a2a/${variant.pair.worker.handle}`,
      headers: { 'content-type': 'application/json', 'x-api-key': variant.pair.requester.key },
      use: () => {
        ledgerEvents.emit = variant.emits ? emit : async () => undefined;
      },
    }));
    // Load: rounds of every variant in turn, so that drift (a growing table, other load on the machine) falls on all alike.
    const throughput = variants.map(() => [] as number[]);
    const p50 = variants.map(() => [] as number[]);
    for (const variant of variants) {
      variant.use();
      await load('warm-up', {
        url: variant.url,
        method: 'POST',
        headers: variant.headers,
        body: sendBody(),
        idReplacement: true,
        duration: 2,
      });
    }
    for (let round = 0; round < rounds; round++) {
      for (const [v, variant] of variants.entries()) {
        variant.use();
        const result = await load(variant.path, {
          url: variant.url,
          method: 'POST',
          headers: variant.headers,
          body: sendBody(),
          idReplacement: true,
          connections: 50,
          duration,
        });
        if (result.errors + result.non2xx > 0) {
          throw new Error(`${variant.path}: ${result.errors} errors, ${result.non2xx} non-2xx`);
        }
        throughput[v].push(result.requestsPerSecond);
        p50[v].push(result.p50);
      }
    }
    // Latency: one send at a time, the variants interleaved send by send.
    const samples = variants.map(() => [] as number[]);
    for (let i = 0; i < iterations; i++) {
      for (const [v, variant] of variants.entries()) {
        variant.use();
        const started = performance.now();
        const res = await fetch(variant.url, {
          method: 'POST',
          headers: variant.headers,
          body: sendBody(randomUUID()),
        });
        await res.arrayBuffer();
        if (res.status !== 200) {
          throw new Error(`send failed: ${res.status}`);
        }
        samples[v].push(performance.now() - started);
      }
    }
    ledgerEvents.emit = emit;
    const median = (values: number[]) =>
      percentile(
        [...values].sort((a, b) => a - b),
        50,
      );
    const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
    const base = { rps: median(throughput[0]), mean: mean(samples[0]) };
    console.log(
      `\nOutbox write on the protocol send path: message/send, non-blocking, requester and worker in one organization. Load: median of ${rounds} runs of ${duration} s at 50 connections per variant, interleaved; sequential: ${iterations} sends per variant, interleaved.\n`,
    );
    table(
      variants.map((variant, v) => ({
        path: variant.path,
        'req/s (50 conn.)': Math.round(median(throughput[v])),
        'vs. without': `${((median(throughput[v]) / base.rps) * 100).toFixed(1)}%`,
        'p50 ms (50 conn.)': median(p50[v]),
        'sequential p50 ms': median(samples[v]),
        'sequential mean ms': mean(samples[v]),
        'added mean ms': mean(samples[v]) - base.mean,
      })),
    );
  } finally {
    await server.close();
  }
}

/** An organization (through the Console signup) with a webhook per URL. */
async function organizationWithWebhooks(server: BenchServer, urls: string[]): Promise<string> {
  const signup = await fetch(`${server.baseUrl}/api/v1/console/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      organization_name: 'Bench',
      email: `bench-${Date.now()}@example.test`,
      password: 'correct horse battery staple',
    }),
  }).then((r) => r.json() as Promise<{ token: string; organization: { id: string } }>);
  for (const url of urls) {
    const res = await fetch(`${server.baseUrl}/api/v1/webhooks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${signup.token}` },
      body: JSON.stringify({ url, events: ['*'] }),
    });
    if (res.status !== 201) {
      throw new Error(`webhook: ${res.status} ${await res.text()}`);
    }
  }
  return signup.organization.id;
}

/** Subscriptions that match every event but are never sent to (the dispatcher is off). */
async function addWebhooks(db: DataSource, organizationId: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    await db.query(
      `INSERT INTO webhooks (organization_id, url, events, secret) VALUES ($1, 'https://hooks.example.invalid/', '{*}', 'whsec_AAAA')`,
      [organizationId],
    );
  }
}

/** A loopback receiver that answers 204 at once and notes when each webhook-id first arrived. */
async function startCountingReceiver() {
  const arrivals = new Map<string, number>();
  let duplicates = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const id = String(req.headers['webhook-id']);
      if (arrivals.has(id)) {
        duplicates += 1;
      } else {
        arrivals.set(id, performance.now());
      }
      res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`,
    arrivals,
    get duplicates() {
      return duplicates;
    },
    reset() {
      arrivals.clear();
      duplicates = 0;
    },
    async until(count: number) {
      const deadline = Date.now() + 300_000;
      while (arrivals.size < count) {
        if (Date.now() > deadline) {
          throw new Error(`only ${arrivals.size} of ${count} events arrived`);
        }
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
