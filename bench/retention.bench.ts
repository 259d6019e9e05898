import { RetentionService } from '../src/retention/retention.service';
import { load, startBenchServer, table, type BenchServer } from './lib';
import { agentPair } from './protocol.bench';

/**
 * Issue 16: retention.
 * (a) rows pruned per second: a backlog of expired outbox events, admission decisions
 *     and Idempotency-Key records, deleted by RetentionService's passes (statements of
 *     RETENTION_BATCH_SIZE rows, 500 by default) with nothing else running;
 * (b) non-blocking `message/send` throughput, without pruning and then with passes
 *     running back to back over a fresh backlog during the whole load run — the send
 *     path must not slow down while the pruner works.
 * The dispatcher is off, so no scheduled pass runs; the benchmark runs them.
 * BENCH_RETENTION_ROWS sets the backlog per kind (100000), BENCH_DURATION the load runs (10 s).
 */
export async function run(): Promise<void> {
  const duration = Number(process.env.BENCH_DURATION ?? 10);
  const rows = Number(process.env.BENCH_RETENTION_ROWS ?? 100_000);
  const server = await startBenchServer({ EVENTS_DISPATCHER: 'off' });
  try {
    const retention = server.app.get(RetentionService);
    const { requester, worker } = await agentPair(server.baseUrl, server.db, 'retention');
    const url = `${server.baseUrl}/a2a/${worker.handle}`;
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'message/send',
      params: {
        message: { kind: 'message', role: 'user', messageId: '[<id>]', parts: [{ kind: 'text', text: 'benchmark' }] },
        configuration: { blocking: false },
      },
    });
    const send = (name: string) =>
      load(name, {
        url,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': requester.key },
        body,
        idReplacement: true,
        connections: 50,
        duration,
      });

    // (a) the pruner alone.
    await seed(server, rows, 0);
    const started = process.hrtime.bigint();
    let pruned = 0;
    for (let gone = -1; gone !== 0;) {
      gone = Object.values(await retention.runOnce()).reduce((a, b) => a + b, 0);
      pruned += gone;
    }
    const aloneSeconds = Number(process.hrtime.bigint() - started) / 1e9;

    // (b) sends without, then with, passes running.
    await send('warm-up');
    const without = await send('message/send, no pruning');
    await seed(server, rows, 1);
    let during = 0;
    let loading = true;
    const pruning = (async () => {
      while (loading) {
        const gone = Object.values(await retention.runOnce()).reduce((a, b) => a + b, 0);
        during += gone;
        if (gone === 0) {
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
    })();
    const withPruning = await send('message/send, pruning running');
    loading = false;
    await pruning;

    table([
      {
        measure: `prune ${pruned} expired rows (3 kinds), alone`,
        'rows/s': Math.round(pruned / aloneSeconds),
        'req/s': '',
        'p50 ms': '',
        'p99 ms': '',
        errors: 0,
      },
      {
        measure: without.name,
        'rows/s': '',
        'req/s': Math.round(without.requestsPerSecond),
        'p50 ms': without.p50,
        'p99 ms': without.p99,
        errors: without.errors + without.non2xx,
      },
      {
        measure: withPruning.name,
        'rows/s': Math.round(during / duration),
        'req/s': Math.round(withPruning.requestsPerSecond),
        'p50 ms': withPruning.p50,
        'p99 ms': withPruning.p99,
        errors: withPruning.errors + withPruning.non2xx,
      },
    ]);
    console.log(
      `\nbacklog: ${rows} rows per kind (events, admission_decisions, idempotency_keys); pruned during the ${duration} s send run: ${during}`,
    );
    console.log(
      `send throughput with pruning: ${((withPruning.requestsPerSecond / without.requestsPerSecond - 1) * 100).toFixed(1)}% against without`,
    );
  } finally {
    await server.close();
  }
}

/** `rows` expired rows of each kind, straight into the tables. */
async function seed(server: BenchServer, rows: number, round: number): Promise<void> {
  const [{ id: organization }] = await server.db.query(`SELECT id FROM organizations LIMIT 1`);
  await server.db.query(
    `INSERT INTO events (id, type, organization_id, data, created_at)
     SELECT 'evt_Z' || $3::int || lpad(g::text, 24, '0'), 'ping', $1, '{}', now() - interval '40 days' FROM generate_series(1, $2::int) g`,
    [organization, rows, round],
  );
  await server.db.query(
    `INSERT INTO admission_decisions (requester_id, requester_handle, worker_id, worker_handle, reason, decided_by, created_at)
     SELECT gen_random_uuid(), 'r', gen_random_uuid(), 'w', 'blocked_by_worker', 'worker', now() - interval '100 days' FROM generate_series(1, $1::int)`,
    [rows],
  );
  await server.db.query(
    `INSERT INTO idempotency_keys (scope, key, request_hash, created_at)
     SELECT 'bench', $2::int || '-' || g, '\\x00', now() - interval '2 days' FROM generate_series(1, $1::int) g`,
    [rows, round],
  );
  await server.db.query('ANALYZE events, admission_decisions, idempotency_keys');
}
