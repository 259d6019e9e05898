import { Database } from '../src/database/database';
import { EventsService } from '../src/events/events.service';
import { openEventStream } from '../test/support/event-stream';
import { percentile, startBenchServer, table } from './lib';

/**
 * Issue 15: the event stream's latency, from an event's commit to its arrival at a
 * client of `GET /api/v1/events/stream` (fetch, on loopback, in this process). The
 * wake-up is PostgreSQL's NOTIFY, delivered after the commit to the instance's
 * listening connection; the stream then reads the outbox after its position.
 * Sequential: one event at a time. Concurrent: 16 writers at once, where an event
 * may wait for an earlier transaction to end (the visibility horizon).
 */
export async function run(): Promise<void> {
  const events = Number(process.env.BENCH_EVENTS ?? 1000);
  const server = await startBenchServer({ EVENTS_DISPATCHER: 'off' });
  try {
    const signup = await fetch(`${server.baseUrl}/api/v1/console/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        organization_name: 'Bench',
        email: `bench-${Date.now()}@example.test`,
        password: 'correct horse battery staple',
      }),
    }).then((r) => r.json() as Promise<{ token: string; organization: { id: string } }>);
    const organizationId = signup.organization.id;
    const emitter = server.app.get(EventsService);
    const stream = await openEventStream(server.baseUrl, { authorization: `Bearer ${signup.token}` });
    const committedAt = new Map<string, number>();
    const emit = async (n: number) => {
      const id = await server.app
        .get(Database)
        .transaction((em) => emitter.emit(em, { type: 'task.status', organizationId, data: { n } }));
      committedAt.set(id!, performance.now());
    };
    const receive = async (count: number) => {
      const latencies: number[] = [];
      for (let i = 0; i < count; i++) {
        const event = (await stream.next(30_000))!;
        const arrived = performance.now();
        // The commit is noted when the transaction's promise resolves; an event may arrive first.
        latencies.push(committedAt.has(event.id!) ? arrived - committedAt.get(event.id!)! : 0);
      }
      return latencies.sort((a, b) => a - b);
    };

    // Warm-up.
    for (let i = 0; i < 100; i++) {
      await emit(i);
    }
    await receive(100);

    const sequential: number[] = [];
    for (let i = 0; i < events; i++) {
      const received = receive(1);
      await emit(i);
      sequential.push(...(await received));
    }
    sequential.sort((a, b) => a - b);

    committedAt.clear();
    const received = receive(events);
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < events) {
          await emit(next++);
        }
      }),
    );
    const concurrent = await received;
    await stream.close();

    console.log(
      'Commit → event received on GET /api/v1/events/stream (one organization-wide stream, in-process client).\n',
    );
    table([
      {
        writers: 1,
        events,
        'p50 ms': percentile(sequential, 50),
        'p99 ms': percentile(sequential, 99),
        'max ms': sequential[sequential.length - 1],
      },
      {
        writers: 16,
        events,
        'p50 ms': percentile(concurrent, 50),
        'p99 ms': percentile(concurrent, 99),
        'max ms': concurrent[concurrent.length - 1],
      },
    ]);
  } finally {
    await server.close();
  }
}
