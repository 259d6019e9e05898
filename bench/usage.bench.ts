import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { AdminKeyPrincipal, AgentKeyPrincipal, Principal } from '../src/common/principal';
import type { UsageQuery } from '../src/usage/dto/usage.query';
import { UsageService } from '../src/usage/usage.service';
import { percentile, startBenchServer, table } from './lib';

/**
 * Issue 40: `GET /api/v1/usage` (docs/api.md §18) over the rollups of BENCH_TASKS tasks
 * (1,000,000 by default): 10 organizations of 20 identities, 400 pairs, 90 days of
 * hourly rollups, five tasks per rollup row (one hour, one pair, one currency), seeded
 * in one generate_series statement. Times UsageService.summarize in process (the query and the
 * labels' read, without HTTP) for an organization's admin and for one agent, per
 * grouping over 30 and 90 days. Aim: p95 ≤ 200 ms at 1,000,000 tasks.
 */
const TASKS = Number(process.env.BENCH_TASKS ?? 1_000_000);
const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 200);
const ORGANIZATIONS = 10;
const PER_ORGANIZATION = 20;
const HOURS = 90 * 24;
const TASKS_PER_ROW = 5;
/** Pairs that work together: each has a rollup row in TASKS / TASKS_PER_ROW / PAIRS of the HOURS. */
const PAIRS = 400;

export async function run(): Promise<void> {
  const server = await startBenchServer();
  try {
    const { db } = server;
    const organizations = (await db.query(
      `INSERT INTO organizations (name) SELECT 'Bench ' || g FROM generate_series(1, $1::int) g RETURNING id`,
      [ORGANIZATIONS],
    )) as Array<{ id: string }>;
    const identities = (await db.query(
      `INSERT INTO identities (agent_handle, organization_id, claimed_at, enabled)
       SELECT 'bench-usage-' || o.n || '-' || g, o.id, now(), true
         FROM unnest($1::uuid[]) WITH ORDINALITY o(id, n) CROSS JOIN generate_series(1, $2::int) g
       RETURNING id, organization_id`,
      [organizations.map((o) => o.id), PER_ORGANIZATION],
    )) as Array<{ id: string; organization_id: string }>;
    const rows = Math.ceil(TASKS / TASKS_PER_ROW);
    const end = new Date(Math.floor(Date.now() / 3600_000) * 3600_000);
    const started = performance.now();
    // Row g: pair g mod PAIRS (its requester identity pair mod n, its worker one or two after it; a currency
    // for two pairs in three), in the (g div PAIRS)th of its hours — 7 apart, shifted per pair, so keys never collide.
    await db.query(
      `WITH i AS (SELECT id, organization_id, row_number() OVER (ORDER BY agent_handle) - 1 AS n
                    FROM identities WHERE agent_handle LIKE 'bench-usage-%')
       INSERT INTO usage_hourly (hour, requester_identity_id, requester_organization_id, worker_identity_id, worker_organization_id,
              currency, tasks, completed, failed, canceled, rejected, messages, parts, artifact_bytes, duration_ms,
              input_tokens, output_tokens, cost)
       SELECT $1::timestamptz - make_interval(hours => ((g / $6) * 7 + g % $6) % $2 + 1), r.id, r.organization_id, w.id,
              w.organization_id, (ARRAY['', 'USD', 'EUR'])[1 + (g % $6) % 3], $3, $3 - 2, 1, 1, 0, $3 * 4, $3 * 6, $3 * 2048,
              $3 * 5000, $3 * 1200, $3 * 300, CASE WHEN (g % $6) % 3 = 0 THEN 0 ELSE $3 * 0.0042 END
         FROM generate_series(0, $4::int - 1) g
         JOIN i r ON r.n = (g % $6) % $5
         JOIN i w ON w.n = ((g % $6) / $5 + 1 + (g % $6) % $5) % $5
       ON CONFLICT DO NOTHING`,
      [end, HOURS, TASKS_PER_ROW, rows, identities.length, PAIRS],
    );
    await db.query('ANALYZE usage_hourly');
    const [{ seeded, tasks }] = (await db.query(
      'SELECT count(*)::int AS seeded, COALESCE(sum(tasks), 0)::int AS tasks FROM usage_hourly',
    )) as Array<{ seeded: number; tasks: number }>;
    console.log(
      `seeded ${seeded} rollup rows (${tasks} tasks) in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
    );

    const usage = server.app.get(UsageService);
    const admin: AdminKeyPrincipal = { kind: 'admin', id: randomUUID(), organizationId: organizations[0].id };
    const one = identities.find((identity) => identity.organization_id === organizations[0].id)!;
    const agent: AgentKeyPrincipal = {
      kind: 'agent',
      id: randomUUID(),
      organizationId: one.organization_id,
      identity: { id: one.id, handle: 'bench', claimed: true, enabled: true },
    };
    const day = 24 * 3600_000;
    const range = (days: number) => ({
      from: new Date(end.getTime() - days * day).toISOString(),
      to: end.toISOString(),
    });
    const cases: Array<[string, Principal, UsageQuery]> = [
      ['admin, by identity, 30 days', admin, { group_by: 'identity', ...range(30) }],
      ['admin, by peer, 30 days', admin, { group_by: 'peer', ...range(30) }],
      ['admin, by organization, 90 days', admin, { group_by: 'organization', ...range(90) }],
      ['admin, by day, 90 days', admin, { group_by: 'day', ...range(90) }],
      ['admin, by hour, 7 days', admin, { group_by: 'hour', ...range(7) }],
      ['agent, by day, 90 days', agent, { group_by: 'day', ...range(90) }],
      ['agent, by peer, 30 days', agent, { group_by: 'peer', ...range(30) }],
    ];
    const results: Array<Record<string, string | number>> = [];
    for (const [name, principal, query] of cases) {
      for (let i = 0; i < Math.min(20, ITERATIONS); i++) {
        await usage.summarize(principal, query);
      }
      const samples: number[] = [];
      let groups = 0;
      for (let i = 0; i < ITERATIONS; i++) {
        const at = performance.now();
        groups = (await usage.summarize(principal, query)).groups.length;
        samples.push(performance.now() - at);
      }
      samples.sort((a, b) => a - b);
      results.push({
        case: name,
        groups,
        'p50 ms': percentile(samples, 50).toFixed(2),
        'p95 ms': percentile(samples, 95).toFixed(2),
        'p99 ms': percentile(samples, 99).toFixed(2),
      });
    }
    table(results);
  } finally {
    await server.close();
  }
}
