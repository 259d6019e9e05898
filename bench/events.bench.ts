import { createServer } from 'node:http';
import { DataSource } from 'typeorm';
import { DeliveryDispatcher } from '../src/events/delivery-dispatcher';
import { EventsService, type EventInput } from '../src/events/events.service';
import { KeysService } from '../src/keys/keys.service';
import { percentile, startBenchServer, table, type BenchServer } from './lib';

/**
 * Issue 6: (1) events per second from commit to a loopback receiver's 2xx, with the
 * latency of each event over that path, and the rate at which one dispatcher drains
 * a backlog; (2) what the outbox write adds to a write path that emits (the event
 * row and its fan-out, in the same transaction).
 */
export async function run(): Promise<void> {
  await throughput();
  await outboxCost();
}

async function throughput(): Promise<void> {
  const events = Number(process.env.BENCH_EVENTS ?? 3000);
  const rows: Array<Record<string, string | number>> = [];
  for (const batch of [20, 50, 100]) { // 50 is the default
    const receiver = await startCountingReceiver();
    const server = await startBenchServer({ WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true', EVENTS_BATCH_SIZE: String(batch) });
    try {
      const organizationId = await organizationWithWebhooks(server, [receiver.url]);
      const emitter = server.app.get(EventsService);
      const committedAt = new Map<string, number>();
      const emit = async (i: number) => {
        const event: EventInput = { type: 'task.status', organizationId, data: { n: i, state: 'working' } };
        const id = await server.db.transaction((em) => emitter.emit(em, event));
        committedAt.set(id!, performance.now());
      };
      const burst = async () => {
        let next = 0;
        await Promise.all(Array.from({ length: 16 }, async () => {
          while (next < events) await emit(next++);
        }));
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
        'EVENTS_BATCH_SIZE': batch,
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

async function outboxCost(): Promise<void> {
  const iterations = Number(process.env.BENCH_ITERATIONS ?? 1500);
  const server = await startBenchServer({ EVENTS_DISPATCHER: 'off' });
  try {
    const keys = server.app.get(KeysService);
    const events = server.app.get(EventsService);
    const quiet = await organizationWithWebhooks(server, []);
    const busy = await organizationWithWebhooks(server, []);
    await addWebhooks(server.db, busy, 5);
    const [{ user }] = (await server.db.query(`SELECT id AS user FROM console_users WHERE organization_id = $1`, [quiet])) as Array<{ user: string }>;
    const mint = (organizationId: string) => () => server.db.transaction((em) =>
      keys.mintWith(em, { scope: 'admin', organizationId, createdBy: { type: 'console_user', id: user } }));
    const emit = events.emit.bind(events);
    const variants: Array<{ path: string; run: () => Promise<unknown>; emits: boolean }> = [
      { path: 'mint a key, outbox write taken out', run: mint(quiet), emits: false },
      { path: 'mint + event, no subscriber', run: mint(quiet), emits: true },
      { path: 'mint + event → 5 deliveries', run: mint(busy), emits: true },
    ];
    // Interleaved, so that load from elsewhere on the machine falls on every variant alike.
    const samples = variants.map(() => [] as number[]);
    for (let i = 0; i < iterations + 50; i++) {
      for (const [v, variant] of variants.entries()) {
        events.emit = variant.emits ? emit : async () => null;
        const started = performance.now();
        await variant.run();
        if (i >= 50) samples[v].push(performance.now() - started);
      }
    }
    events.emit = emit;
    const stats = samples.map((list) => {
      const sorted = [...list].sort((a, b) => a - b);
      return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), mean: list.reduce((a, b) => a + b, 0) / list.length };
    });
    console.log(`\nOutbox write on a write path that emits: minting a key in its transaction, sequential, ${iterations} of each, interleaved.\n`);
    table(variants.map((variant, v) => ({
      path: variant.path, 'p50 ms': stats[v].p50, 'p99 ms': stats[v].p99, 'mean ms': stats[v].mean,
      'added mean ms': stats[v].mean - stats[0].mean,
    })));
  } finally {
    await server.close();
  }
}

/** An organization (through the Console signup) with a webhook per URL. */
async function organizationWithWebhooks(server: BenchServer, urls: string[]): Promise<string> {
  const signup = await fetch(`${server.baseUrl}/api/v1/console/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ organization_name: 'Bench', email: `bench-${Date.now()}@example.test`, password: 'correct horse battery staple' }),
  }).then((r) => r.json() as Promise<{ token: string; organization: { id: string } }>);
  for (const url of urls) {
    const res = await fetch(`${server.baseUrl}/api/v1/webhooks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${signup.token}` },
      body: JSON.stringify({ url, events: ['*'] }),
    });
    if (res.status !== 201) throw new Error(`webhook: ${res.status} ${await res.text()}`);
  }
  return signup.organization.id;
}

/** Subscriptions that match every event but are never sent to (the dispatcher is off). */
async function addWebhooks(db: DataSource, organizationId: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    await db.query(`INSERT INTO webhooks (organization_id, url, events, secret) VALUES ($1, 'https://hooks.example.invalid/', '{*}', 'whsec_AAAA')`, [organizationId]);
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
      if (arrivals.has(id)) duplicates += 1;
      else arrivals.set(id, performance.now());
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
        if (Date.now() > deadline) throw new Error(`only ${arrivals.size} of ${count} events arrived`);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
