import { loadavg } from 'node:os';
import { AdmissionService } from '../src/admission/admission.service';
import { rulesBetween } from '../src/admission/admission.repository';
import type { DataSource } from 'typeorm';
import { IdentitiesService } from '../src/identities/identities.service';
import type { Identity } from '../src/identities/identity.entity';
import { startBenchServer, table, timeIt } from './lib';

/**
 * Issue 4: admission latency for one pair as each identity's rule count grows
 * (0, 1,000, 100,000 rules each). Measures AdmissionService.evaluate in process, so
 * the figure is the database part plus the pure decision, without HTTP. Aim: flat,
 * p99 under 2 ms.
 */
const SIZES = [0, 1_000, 100_000];
const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 5000);

export async function run(): Promise<void> {
  const server = await startBenchServer();
  try {
    const { db } = server;
    const [a, b] = (await db.query(
      `INSERT INTO organizations (name) VALUES ('Bench A'), ('Bench B') RETURNING id`,
    )) as Array<{ id: string }>;
    const identity = async (handle: string, organizationId: string) =>
      (
        (await db.query(
          `INSERT INTO identities (agent_handle, organization_id, claimed_at, enabled) VALUES ($1, $2, now(), true) RETURNING id`,
          [handle, organizationId],
        )) as Array<{ id: string }>
      )[0].id;
    const requesterId = await identity('bench-requester', a.id);
    const workerId = await identity('bench-worker', b.id);
    // The rules that decide: requester allows the worker, the worker allows the requester's organization.
    await db.query(
      `INSERT INTO contact_rules (identity_id, organization_id, direction, action, peer_type, peer_identity_id, peer_organization_id)
       VALUES ($1, $2, 'outbound', 'allow', 'identity', $3, NULL), ($3, $4, 'inbound', 'allow', 'organization', NULL, $2)`,
      [requesterId, a.id, workerId, b.id],
    );
    // Peers for the other rules: unclaimed identities, enough for the largest size.
    await db.query(
      `INSERT INTO identities (agent_handle) SELECT 'bench-peer-' || g FROM generate_series(1, $1::int) g`,
      [SIZES[SIZES.length - 1]],
    );

    const identities = server.app.get(IdentitiesService);
    const admission = server.app.get(AdmissionService);
    const requester = (await identities.findById(requesterId))!;
    const worker = (await identities.findById(workerId))!;

    // Warm the JIT, the pool and PostgreSQL's caches before the first size is timed.
    for (let i = 0; i < 1000; i++) {
      await admission.evaluate(requester, worker);
    }
    console.log(
      `load average at start: ${loadavg()
        .map((n) => n.toFixed(2))
        .join(' ')}\n`,
    );

    const rows: Array<Record<string, string | number>> = [];
    let seeded = 0;
    for (const size of SIZES) {
      if (size > seeded) {
        // Each identity gets rules about `size` other identities, in every direction and action.
        await db.query(
          `INSERT INTO contact_rules (identity_id, organization_id, direction, action, peer_type, peer_identity_id)
           SELECT o.id, o.organization_id, (ARRAY['inbound', 'outbound', 'both'])[1 + g % 3], CASE WHEN g % 2 = 0 THEN 'allow' ELSE 'block' END,
                  'identity', p.id
             FROM generate_series($2::int + 1, $3::int) g
             JOIN identities p ON p.agent_handle = 'bench-peer-' || g
            CROSS JOIN (SELECT id, organization_id FROM identities WHERE id = ANY($1::uuid[])) o`,
          [[requesterId, workerId], seeded, size],
        );
        seeded = size;
        await db.query('ANALYZE contact_rules');
      }
      const lookup = await explain(server.db, requester, worker);
      const allowed = await timeIt(ITERATIONS, () => admission.evaluate(requester, worker));
      // Reversed, the pair is denied (the worker's side allows nothing outbound): the read plus the log write.
      const denied = await timeIt(Math.round(ITERATIONS / 5), () => admission.evaluate(worker, requester));
      rows.push(
        {
          'rules per identity': size.toLocaleString('en'),
          path: 'allowed (1 read)',
          'p50 ms': allowed.p50,
          'p99 ms': allowed.p99,
          'mean ms': allowed.mean,
          'lookup buffers': lookup.buffers,
          'lookup exec ms': lookup.executionMs,
        },
        {
          'rules per identity': size.toLocaleString('en'),
          path: 'denied (read + log write)',
          'p50 ms': denied.p50,
          'p99 ms': denied.p99,
          'mean ms': denied.mean,
          'lookup buffers': '',
          'lookup exec ms': '',
        },
      );
    }
    const [{ count }] = (await db.query('SELECT count(*)::int AS count FROM contact_rules')) as Array<{
      count: number;
    }>;
    table(rows);
    console.log(
      `load average at end: ${loadavg()
        .map((n) => n.toFixed(2))
        .join(' ')}`,
    );
    console.log(
      `\ncontact_rules rows at the end: ${count.toLocaleString('en')}; ${ITERATIONS} allowed / ${Math.round(ITERATIONS / 5)} denied evaluations per size\n`,
    );

    const plan = (await db.query(
      `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, SUMMARY OFF) ${lookup(requester, worker).text}`,
      lookup(requester, worker).values as unknown[],
    )) as Array<{ 'QUERY PLAN': string }>;
    console.log('EXPLAIN of the pair lookup at the largest size:\n');
    console.log(plan.map((line) => `    ${line['QUERY PLAN']}`).join('\n'));
  } finally {
    await server.close();
  }
}

/** The pair lookup AdmissionRepository.rulesBetween prepares. */
const lookup = (requester: Identity, worker: Identity) => rulesBetween(requester, worker);

/** Pages the pair lookup touches and its server-side time: a figure the machine's load does not blur. */
async function explain(
  db: DataSource,
  requester: Identity,
  worker: Identity,
): Promise<{ buffers: number; executionMs: number }> {
  const [
    {
      'QUERY PLAN': [result],
    },
  ] = (await db.query(
    `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${lookup(requester, worker).text}`,
    lookup(requester, worker).values as unknown[],
  )) as Array<{
    'QUERY PLAN': Array<{
      Plan: { 'Shared Hit Blocks': number; 'Shared Read Blocks': number };
      'Execution Time': number;
    }>;
  }>;
  return {
    buffers: result.Plan['Shared Hit Blocks'] + result.Plan['Shared Read Blocks'],
    executionMs: result['Execution Time'],
  };
}
