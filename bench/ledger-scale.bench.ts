import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AsyncLocalStorage } from 'node:async_hooks';
import { Client } from 'pg';
import { sqlExamples } from '../src/database/generate-sql';
import { WriteBatch } from '../src/database/write-batch';
import { currentRequestContext } from '../src/common/request-context';
import { encodeCursor } from '../src/common/pagination';
import { load, percentile, startBenchServer, table, type BenchServer, type LoadResult } from './lib';
import { agentPair, sendBody } from './protocol.bench';

/**
 * Issue 13: cost flat with size. The same measures on an empty ledger and on one that
 * already holds BENCH_LEDGER_TASKS tasks (default 1,000,000) with their contexts,
 * messages, task events and outbox events:
 * - non-blocking `message/send` per second (autocannon, 50 connections);
 * - `tasks/get` (JSON-RPC, v0.3: no A2A-Version header) p50 over tasks of the pair: any of
 *   them, and (like for like) submitted ones with their one message, as a send leaves them;
 * - `GET /api/v1/tasks?role=worker` (the worker's key) p50: the first page, and a page
 *   in the middle of the worker's list (a keyset cursor, no OFFSET).
 * Two servers (one empty, one seeded) measured in BENCH_ROUNDS rounds (default 3;
 * BENCH_DURATION, BENCH_ITERATIONS as elsewhere): each round a send run on each, then
 * the latencies call by call, alternating between the two; the medians are compared.
 * Then the EXPLAIN (ANALYZE, BUFFERS) plan of every statement that one call of each
 * kind sends outside a transaction, captured at run time (the driver spied on), so a
 * rewrite of a path is explained as it is, not as a copy here remembers it — and
 * planned as the service runs it: a prepared statement with its generic plan, one
 * planned on each run (sql.plannedPerRun) for its values. (A transaction's statements
 * go in pipelines, not explained here; test/ledger/plans-at-scale checks the lock's.)
 * BENCH_SEED_VERBOSE=1 prints the time of each seeding statement.
 */

type Db = BenchServer['db'];

interface Identity {
  id: string;
  handle: string;
  organizationId: string;
  key: string;
}

interface Figures {
  sends: number;
  sendErrors: number;
  /** WAL written per task the send run created (bytes): what each send costs the disk and replicas. */
  walPerSend: number;
  getTask: number;
  getTaskP99: number;
  /** GetTask of a submitted task with its one message: the same read on both sides. */
  getSubmitted: number;
  getSubmittedP99: number;
  list: number;
  listP99: number;
  deepList: number;
  deepListP99: number;
}

/** One statement a call sent, and its plan (EXPLAIN ANALYZE run just before it, then rolled back). */
interface Explained {
  call: string;
  label: string;
  text: string;
  plan: string;
  executionMs: number;
}

export async function run(): Promise<void> {
  const size = Number(process.env.BENCH_LEDGER_TASKS ?? 1_000_000);
  const duration = Number(process.env.BENCH_DURATION ?? 10);
  const iterations = Number(process.env.BENCH_ITERATIONS ?? 300);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  // Two servers, measured in rounds that take both (latencies call by call, in
  // alternation): a change in the machine's other load then lands on both sides instead of on one.
  const empty = await startBenchServer();
  const full = await startBenchServer();
  try {
    const emptyPair = await measuredPair(empty);
    const fullPair = await measuredPair(full);
    const started = Date.now();
    const seeded = await seed(full.db, size, fullPair.requester, fullPair.worker);
    const seedSeconds = (Date.now() - started) / 1000;

    const results = { empty: [] as Figures[], full: [] as Figures[] };
    for (let round = 0; round < rounds; round++) {
      const figures = await measure(
        { server: empty, pair: emptyPair },
        { server: full, pair: fullPair },
        duration,
        iterations,
      );
      results.empty.push(figures.empty);
      results.full.push(figures.full);
    }
    const emptyPlans = await explainCalls(empty, emptyPair);
    const fullPlans = await explainCalls(full, fullPair);
    const emptyTasks = await count(empty.db, 'tasks');
    const fullTasks = await count(full.db, 'tasks');

    console.log(
      `seeded: ${seeded.tasks} tasks, ${seeded.contexts} contexts, ${seeded.messages} messages, ` +
        `${seeded.taskEvents} task events, ${seeded.events} outbox events, over ${seeded.organizations} organizations ` +
        `and ${seeded.identities} identities; the measured pair holds ${seeded.pairTasks} of the tasks, its worker ` +
        `${seeded.workerTasks}; inserts ${seeded.seconds.toFixed(0)} s, reference check + VACUUM ANALYZE ` +
        `${(seedSeconds - seeded.seconds).toFixed(0)} s.\n` +
        `After ${rounds} alternating rounds (the median of each shown): the empty ledger holds ${emptyTasks} tasks ` +
        `(those of its send runs), the seeded one ${fullTasks}.\n`,
    );
    const label = `${(size / 1000).toLocaleString('en-US')}k tasks`;
    const median = (side: Figures[], key: keyof Figures) =>
      percentile(
        [...side.map((f) => f[key])].sort((a, b) => a - b),
        50,
      );
    const rows: Array<[string, keyof Figures, 'higher' | 'lower']> = [
      ['message/send, non-blocking (req/s)', 'sends', 'higher'],
      ['… WAL written per send (bytes)', 'walPerSend', 'lower'],
      ['tasks/get p50 (ms)', 'getTask', 'lower'],
      ['tasks/get p99 (ms)', 'getTaskP99', 'lower'],
      ['tasks/get of a submitted task p50 (ms)', 'getSubmitted', 'lower'],
      ['tasks/get of a submitted task p99 (ms)', 'getSubmittedP99', 'lower'],
      ['GET /api/v1/tasks?role=worker p50 (ms)', 'list', 'lower'],
      ['GET /api/v1/tasks?role=worker p99 (ms)', 'listP99', 'lower'],
      ['… the page mid-list (cursor) p50 (ms)', 'deepList', 'lower'],
    ];
    table(
      rows.map(([measure, key, better]) => {
        const before = median(results.empty, key);
        const after = median(results.full, key);
        return {
          measure,
          empty: key === 'sends' || key === 'walPerSend' ? Math.round(before) : before,
          [label]: key === 'sends' || key === 'walPerSend' ? Math.round(after) : after,
          ratio: `${(after / before).toFixed(2)}×`,
          // Within 20%: throughput at most 20% lower, latency at most 20% higher.
          'within 20%': (better === 'higher' ? after >= 0.8 * before : after <= 1.2 * before) ? 'yes' : 'no',
        };
      }),
    );
    const each = (side: Figures[]) => side.map((f) => Math.round(f.sends)).join(', ');
    const errors = (side: Figures[]) => side.reduce((n, f) => n + f.sendErrors, 0);
    console.log(
      `\nsends per round (req/s): empty ${each(results.empty)}; ${label} ${each(results.full)}; ` +
        `errors: ${errors(results.empty)} and ${errors(results.full)}`,
    );

    console.log('\nStatements per call, execution time in EXPLAIN ANALYZE (ms), empty vs at scale:\n');
    table(
      fullPlans.map((s, i) => ({
        '#': i + 1,
        call: s.call,
        statement: s.label,
        empty:
          emptyPlans.find((e) => e.call === s.call && e.label === s.label && e.text === s.text)?.executionMs ?? NaN,
        [label]: s.executionMs,
        'top node': s.plan
          .split('\n')[0]
          .trim()
          .replace(/\s+\(cost=.*$/, ''),
      })),
    );
    const differing = emptyPlans.filter(
      (e) => !fullPlans.some((f) => f.call === e.call && f.label === e.label && shape(f.plan) === shape(e.plan)),
    );
    if (differing.length > 0) {
      console.log('\nPlans on the empty ledger whose shape differs from every plan at scale:');
      for (const e of differing) {
        console.log(`\n### ${e.call}: ${e.label} (empty)\n\n${e.plan}`);
      }
    }
    console.log(`\nPlans at ${label}:`);
    for (const [i, s] of fullPlans.entries()) {
      console.log(`\n### ${i + 1}. ${s.call}: ${s.label}\n\n${s.text}\n\n${s.plan}`);
    }
  } finally {
    await full.close();
    await empty.close();
  }
}

interface Pair {
  requester: Identity;
  worker: Identity;
}

/** The pair whose calls are measured: a requester and a worker in one organization, with their agent keys. */
async function measuredPair(server: BenchServer): Promise<Pair> {
  const pair = await agentPair(server.baseUrl, server.db, 'scale');
  return { requester: await identity(server.db, pair.requester), worker: await identity(server.db, pair.worker) };
}

async function identity(db: Db, agent: { handle: string; key: string }): Promise<Identity> {
  const [row] = (await db.query(`SELECT id, organization_id FROM identities WHERE agent_handle = $1`, [
    agent.handle,
  ])) as Array<{ id: string; organization_id: string }>;
  return { id: row.id, handle: agent.handle, organizationId: row.organization_id, key: agent.key };
}

async function count(db: Db, tableName: string): Promise<number> {
  const [row] = (await db.query(`SELECT count(*)::int AS n FROM ${tableName}`)) as Array<{ n: number }>;
  return row.n;
}

/** One ledger as the rounds measure it: its server and its measured pair. */
interface Side {
  server: BenchServer;
  pair: Pair;
}

/**
 * One round on both ledgers: each one's send run (autocannon, one after the other),
 * then every latency measure taken call by call alternating between the two (the
 * order flipped each iteration), so a slow stretch of the machine lands on both
 * ledgers' figures alike instead of on whichever was measured then.
 */
async function measure(
  empty: Side,
  full: Side,
  duration: number,
  iterations: number,
): Promise<{ empty: Figures; full: Figures }> {
  const emptySends = await sendRun(empty, duration);
  const fullSends = await sendRun(full, duration);
  // What autovacuum would do after that many new rows, on both sides alike: neither is then read with a plan
  // chosen for a table it thought empty.
  for (const side of [empty, full]) {
    await side.server.db.query(`ANALYZE contexts, tasks, messages, task_events, events`);
  }

  // GetTask over samples of the pair's tasks (at scale: mostly seeded ones, anywhere in the table): any task —
  // at scale many are answered ones, whose answer carries a status message and a second message — and, like
  // for like, tasks as a non-blocking send leaves them (submitted, one message).
  const getTask = async (side: Side, condition: string) => {
    const { requester, worker } = side.pair;
    const sample = (
      (await side.server.db.query(
        `SELECT id FROM tasks WHERE requester_identity_id = $1 AND worker_identity_id = $2 AND ${condition}
          ORDER BY random() LIMIT 500`,
        [requester.id, worker.id],
      )) as Array<{ id: string }>
    ).map((r) => r.id);
    let next = 0;
    return async () => {
      const response = await fetch(`${side.server.baseUrl}/a2a/${worker.handle}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': requester.key },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tasks/get',
          params: { id: sample[next++ % sample.length] },
        }),
      });
      const body = (await response.json()) as { result?: { id: string } };
      if (!body.result) {
        throw new Error(`tasks/get failed: ${JSON.stringify(body)}`);
      }
    };
  };
  const list = (side: Side, cursor?: string) => async () => {
    const query = cursor ? `?role=worker&cursor=${cursor}` : '?role=worker';
    const response = await fetch(`${side.server.baseUrl}/api/v1/tasks${query}`, {
      headers: { 'x-api-key': side.pair.worker.key },
    });
    const body = (await response.json()) as { tasks?: unknown[] };
    if (response.status !== 200 || body.tasks?.length !== 50) {
      throw new Error(`list failed: ${response.status}`);
    }
  };
  const [getAny, getSubmitted, firstPage, deepPage] = [
    await timeBoth(iterations, await getTask(empty, 'TRUE'), await getTask(full, 'TRUE')),
    await timeBoth(
      iterations,
      await getTask(empty, `state = 'submitted' AND seq = 1`),
      await getTask(full, `state = 'submitted' AND seq = 1`),
    ),
    await timeBoth(iterations, list(empty), list(full)),
    await timeBoth(
      iterations,
      list(empty, await midListCursor(empty.server.db, empty.pair.worker)),
      list(full, await midListCursor(full.server.db, full.pair.worker)),
    ),
  ];
  const figures = (sends: LoadResult & { walPerSend: number }, side: 0 | 1): Figures => ({
    sends: sends.requestsPerSecond,
    sendErrors: sends.errors + sends.non2xx,
    walPerSend: sends.walPerSend,
    getTask: getAny[side].p50,
    getTaskP99: getAny[side].p99,
    getSubmitted: getSubmitted[side].p50,
    getSubmittedP99: getSubmitted[side].p99,
    list: firstPage[side].p50,
    listP99: firstPage[side].p99,
    deepList: deepPage[side].p50,
    deepListP99: deepPage[side].p99,
  });
  return { empty: figures(emptySends, 0), full: figures(fullSends, 1) };
}

/** Non-blocking sends of the side's pair for `duration` seconds, 50 connections; and the WAL they wrote per send. */
async function sendRun({ server, pair }: Side, duration: number): Promise<LoadResult & { walPerSend: number }> {
  const url = `${server.baseUrl}/a2a/${pair.worker.handle}`;
  const headers = { 'content-type': 'application/json', 'x-api-key': pair.requester.key };
  await load('warm-up', { url, method: 'POST', headers, body: sendBody(), idReplacement: true, duration: 2 });
  const position = async () =>
    (
      (await server.db.query(
        `SELECT pg_current_wal_lsn()::text AS lsn, (SELECT count(*)::int FROM tasks WHERE requester_identity_id = $1) AS tasks`,
        [pair.requester.id],
      )) as Array<{ lsn: string; tasks: number }>
    )[0];
  const before = await position();
  const result = await load('message/send', {
    url,
    method: 'POST',
    headers,
    body: sendBody(),
    idReplacement: true,
    connections: 50,
    duration,
  });
  const after = await position();
  const [{ bytes }] = (await server.db.query(`SELECT pg_wal_lsn_diff($1::pg_lsn, $2::pg_lsn)::float8 AS bytes`, [
    after.lsn,
    before.lsn,
  ])) as Array<{ bytes: number }>;
  return { ...result, walPerSend: bytes / Math.max(1, after.tasks - before.tasks) };
}

/** p50/p99 (ms) of `a` and of `b`, timed in alternation (after a warm-up of each). */
async function timeBoth(
  iterations: number,
  a: () => Promise<unknown>,
  b: () => Promise<unknown>,
): Promise<[{ p50: number; p99: number }, { p50: number; p99: number }]> {
  for (let i = 0; i < Math.min(50, iterations); i++) {
    await a();
    await b();
  }
  const times: [number[], number[]] = [[], []];
  const timed = async (fn: () => Promise<unknown>, into: number[]) => {
    const start = process.hrtime.bigint();
    await fn();
    into.push(Number(process.hrtime.bigint() - start) / 1e6);
  };
  for (let i = 0; i < iterations; i++) {
    if (i % 2 === 0) {
      await timed(a, times[0]);
      await timed(b, times[1]);
    } else {
      await timed(b, times[1]);
      await timed(a, times[0]);
    }
  }
  const summary = (samples: number[]) => {
    samples.sort((x, y) => x - y);
    return { p50: percentile(samples, 50), p99: percentile(samples, 99) };
  };
  return [summary(times[0]), summary(times[1])];
}

async function midListCursor(db: Db, worker: Identity): Promise<string> {
  const [row] = (await db.query(
    `SELECT created_at, id FROM tasks WHERE worker_identity_id = $1 ORDER BY created_at DESC, id DESC
      OFFSET (SELECT count(*) / 2 FROM tasks WHERE worker_identity_id = $1) LIMIT 1`,
    [worker.id],
  )) as Array<{ created_at: Date; id: string }>;
  return encodeCursor({ at: row.created_at.toISOString(), id: row.id });
}

// ---- seeding

interface Seeded {
  tasks: number;
  contexts: number;
  messages: number;
  taskEvents: number;
  events: number;
  organizations: number;
  identities: number;
  pairTasks: number;
  workerTasks: number;
  seconds: number;
}

const SEED_ORGANIZATIONS = 20;
const IDENTITIES_PER_ORGANIZATION = 50;
const PAIRS_PER_ORGANIZATION = 250;
/** Of every 100 seeded tasks: 2 are the measured pair's, 1 more is another requester's to the measured worker. */
const PAIR_SHARE = 2;
const WORKER_SHARE = 1;

/**
 * `size` tasks in set-based statements (one transaction), as the service writes them:
 * a context per task (a send without contextId starts one), the requester's message,
 * for most an answer (an agent message with its status, or a status alone), the
 * numbered task events, and an outbox event per change. Spread over
 * SEED_ORGANIZATIONS organizations of IDENTITIES_PER_ORGANIZATION identities each, with
 * 3% of the tasks on the measured worker (2% from the measured requester). Foreign-key
 * triggers are off during the load (session_replication_role = replica: tasks and
 * messages reference each other), so every reference is checked afterwards instead.
 */
async function seed(db: Db, size: number, requester: Identity, worker: Identity): Promise<Seeded> {
  const started = Date.now();
  await db.transaction(async (tx) => {
    const q = async (text: string, params: unknown[] = []) => {
      const t0 = Date.now();
      const result = await tx.query(text, params);
      if (process.env.BENCH_SEED_VERBOSE) {
        console.log(`${Date.now() - t0} ms: ${text.trim().slice(0, 60)}`);
      }
      return result;
    };
    await q(`SET LOCAL session_replication_role = replica`);
    await q(`SET LOCAL synchronous_commit = off`);
    await q(
      `INSERT INTO organizations (name, created_at)
       SELECT 'Seed ' || o, now() - interval '200 days' FROM generate_series(1, $1) o`,
      [SEED_ORGANIZATIONS],
    );
    await q(
      `INSERT INTO identities (agent_handle, organization_id, display_name, claimed_at, enabled, created_at)
       SELECT 'seed-' || substr(o.id::text, 1, 8) || '-' || k, o.id, 'Seed agent ' || k, now() - interval '200 days', true,
              now() - interval '200 days'
         FROM organizations o CROSS JOIN generate_series(1, $1) k WHERE o.name LIKE 'Seed %'`,
      [IDENTITIES_PER_ORGANIZATION],
    );
    // Other requesters of the measured worker, in its organization.
    await q(
      `INSERT INTO identities (agent_handle, organization_id, claimed_at, enabled, created_at)
       SELECT 'scale-peer-' || k, $1, now() - interval '200 days', true, now() - interval '200 days'
         FROM generate_series(1, 20) k`,
      [worker.organizationId],
    );
    // The pairs: PAIRS_PER_ORGANIZATION distinct (requester, worker) pairs in each seeded organization,
    // numbered from 0; -1 is the measured pair, -2 … -21 the measured worker's other requesters.
    await q(
      `CREATE TEMP TABLE seed_pairs ON COMMIT DROP AS
       SELECT row_number() OVER (ORDER BY o.id, p) - 1 AS n,
              r.id AS r_id, r.agent_handle AS r_handle, r.organization_id AS r_org,
              w.id AS w_id, w.agent_handle AS w_handle, w.organization_id AS w_org
         FROM organizations o
        CROSS JOIN generate_series(0, $2 - 1) p
         JOIN identities r ON r.organization_id = o.id AND r.agent_handle = 'seed-' || substr(o.id::text, 1, 8) || '-' || (1 + p % $1)
         JOIN identities w ON w.organization_id = o.id
                          AND w.agent_handle = 'seed-' || substr(o.id::text, 1, 8) || '-' || (1 + (p % $1 + 1 + p / $1) % $1)
        WHERE o.name LIKE 'Seed %'`,
      [IDENTITIES_PER_ORGANIZATION, PAIRS_PER_ORGANIZATION],
    );
    await q(`INSERT INTO seed_pairs SELECT -1, $1, $2, $3, $4, $5, $6`, [
      requester.id,
      requester.handle,
      requester.organizationId,
      worker.id,
      worker.handle,
      worker.organizationId,
    ]);
    await q(
      `INSERT INTO seed_pairs
       SELECT -1 - row_number() OVER (), r.id, r.agent_handle, r.organization_id, $1, $2, $3
         FROM identities r WHERE r.agent_handle LIKE 'scale-peer-%'`,
      [worker.id, worker.handle, worker.organizationId],
    );
    await q(`ANALYZE seed_pairs`);
    const [{ pairs }] = (await q(`SELECT count(*)::int AS pairs FROM seed_pairs WHERE n >= 0`)) as Array<{
      pairs: number;
    }>;
    // One row per task: its ids, pair, creation time (spread over 90 days, older than anything real) and outcome.
    await q(
      `CREATE TEMP TABLE seed ON COMMIT DROP AS
       SELECT i, gen_random_uuid() AS task_id, gen_random_uuid() AS context_id,
              gen_random_uuid() AS user_message, gen_random_uuid() AS agent_message,
              p.*, now() - interval '1 hour' - make_interval(secs => ($1 - i) * (90 * 86400.0 / $1)) AS created_at,
              (ARRAY['completed', 'completed', 'completed', 'completed', 'completed', 'input-required',
                     'working', 'failed', 'submitted', 'submitted'])[1 + (i * 7) % 10] AS state
         FROM generate_series(1, $1) i
         JOIN seed_pairs p ON p.n = CASE WHEN i % 100 < ${PAIR_SHARE} THEN -1
                                         WHEN i % 100 < ${PAIR_SHARE + WORKER_SHARE} THEN -2 - (i / 100) % 20
                                         ELSE (hashint4(i) & 2147483647) % $2 END`,
      [size, pairs],
    );
    await q(`ANALYZE seed`);
    await q(`
      INSERT INTO contexts (id, requester_identity_id, requester_handle, requester_organization_id,
                            worker_identity_id, worker_handle, worker_organization_id, created_at, updated_at)
      SELECT context_id, r_id, r_handle, r_org, w_id, w_handle, w_org, created_at, created_at FROM seed`);
    // An answered task: a state set by the worker 1–30 minutes later; completed and input-required with an agent message.
    await q(`
      INSERT INTO tasks (id, context_id, requester_identity_id, requester_handle, requester_organization_id,
                         worker_identity_id, worker_handle, worker_organization_id, origin_message_id, state,
                         status_message_id, status_timestamp, metadata, seq, created_at, updated_at)
      SELECT task_id, context_id, r_id, r_handle, r_org, w_id, w_handle, w_org, user_message::text, state,
             CASE WHEN state IN ('completed', 'input-required') THEN agent_message END,
             created_at + answered, NULL, CASE WHEN state = 'submitted' THEN 1 ELSE 2 END, created_at, created_at + answered
        FROM seed, LATERAL (SELECT CASE WHEN state = 'submitted' THEN interval '0'
                                        ELSE make_interval(mins => 1 + i % 30) END AS answered) a`);
    await q(`
      INSERT INTO messages (id, task_id, message_id, role, parts, seq, created_at)
      SELECT user_message, task_id, user_message::text, 'user',
             jsonb_build_array(jsonb_build_object('text', 'Seeded request ' || i || ': please summarise the attached thread.')),
             1, created_at
        FROM seed
      UNION ALL
      SELECT agent_message, task_id, agent_message::text, 'agent',
             jsonb_build_array(jsonb_build_object('text', 'Seeded answer ' || i || ': done, see the summary.')),
             2, created_at + make_interval(mins => 1 + i % 30)
        FROM seed WHERE state IN ('completed', 'input-required')`);
    await q(`
      INSERT INTO task_events (task_id, seq, kind, state, message_id, created_at)
      SELECT task_id, 1, 'status', 'submitted', user_message, created_at FROM seed
      UNION ALL
      SELECT task_id, 2, 'status', state, CASE WHEN state IN ('completed', 'input-required') THEN agent_message END,
             created_at + make_interval(mins => 1 + i % 30)
        FROM seed WHERE state <> 'submitted'`);
    // The outbox: task.created, then task.status for an answer, in the requester's organization
    // (the seeded pairs share theirs). Ids: evt_ + 26 characters of [0-9A-F], unique per row.
    await q(`
      INSERT INTO events (id, type, organization_id, identity_ids, data, created_at)
      SELECT 'evt_' || upper(substr(md5(task_id::text || e.kind), 1, 26)), e.kind, r_org, ARRAY[r_id, w_id],
             json_build_object('task', json_build_object('id', task_id, 'context_id', context_id,
                                                         'requester', r_handle, 'worker', w_handle, 'state', e.state),
                               'seq', e.seq),
             created_at + e.after
        FROM seed
        CROSS JOIN LATERAL (VALUES ('task.created', 1, 'submitted', interval '0'),
                                   ('task.status', 2, seed.state, make_interval(mins => 1 + seed.i % 30))) e(kind, seq, state, after)
       WHERE e.kind = 'task.created' OR seed.state <> 'submitted'`);
  });
  const seconds = (Date.now() - started) / 1000;
  await checkReferences(db);
  for (const t of ['organizations', 'identities', 'contexts', 'tasks', 'messages', 'task_events', 'events']) {
    await db.query(`VACUUM (ANALYZE) ${t}`);
  }
  const scalar = async (text: string, params: unknown[] = []) =>
    ((await db.query(text, params)) as Array<{ n: number }>)[0].n;
  return {
    tasks: await count(db, 'tasks'),
    contexts: await count(db, 'contexts'),
    messages: await count(db, 'messages'),
    taskEvents: await count(db, 'task_events'),
    events: await count(db, 'events'),
    organizations: await count(db, 'organizations'),
    identities: await count(db, 'identities'),
    pairTasks: await scalar(
      `SELECT count(*)::int AS n FROM tasks WHERE requester_identity_id = $1 AND worker_identity_id = $2`,
      [requester.id, worker.id],
    ),
    workerTasks: await scalar(`SELECT count(*)::int AS n FROM tasks WHERE worker_identity_id = $1`, [worker.id]),
    seconds,
  };
}

/** The foreign keys the load skipped, checked over the whole ledger: every reference resolves. */
async function checkReferences(db: Db): Promise<void> {
  const [row] = (await db.query(`
    SELECT
      (SELECT count(*) FROM tasks t WHERE NOT EXISTS (SELECT 1 FROM contexts c WHERE c.id = t.context_id
          AND c.requester_identity_id = t.requester_identity_id AND c.worker_identity_id = t.worker_identity_id))
      + (SELECT count(*) FROM tasks t WHERE t.status_message_id IS NOT NULL
          AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.id = t.status_message_id AND m.task_id = t.id))
      + (SELECT count(*) FROM messages m WHERE NOT EXISTS (SELECT 1 FROM tasks t WHERE t.id = m.task_id))
      + (SELECT count(*) FROM task_events e WHERE NOT EXISTS (SELECT 1 FROM tasks t WHERE t.id = e.task_id))
      + (SELECT count(*) FROM task_events e WHERE e.message_id IS NOT NULL
          AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.id = e.message_id AND m.task_id = e.task_id))
      + (SELECT count(*) FROM tasks t WHERE NOT EXISTS (SELECT 1 FROM identities i WHERE i.id = t.requester_identity_id
          AND i.organization_id = t.requester_organization_id AND i.agent_handle = t.requester_handle))
      + (SELECT count(*) FROM tasks t WHERE NOT EXISTS (SELECT 1 FROM identities i WHERE i.id = t.worker_identity_id
          AND i.organization_id = t.worker_organization_id AND i.agent_handle = t.worker_handle))
      + (SELECT count(*) FROM events e WHERE NOT EXISTS (SELECT 1 FROM organizations o WHERE o.id = e.organization_id))
      AS broken`)) as Array<{ broken: string }>;
  if (Number(row.broken) !== 0) {
    throw new Error(`seeding left ${row.broken} dangling references`);
  }
}

// ---- plans of what the calls actually send

/**
 * One call of each kind (a non-blocking send, GetTask, the worker's first page), each
 * with its own X-Request-Id. While it runs, every statement the driver is given in that
 * request's context (src/common/request-context.ts) is explained first on the same
 * connection — EXPLAIN (ANALYZE, BUFFERS) inside a savepoint (or a transaction) that is
 * rolled back — and then sent as it was; the call sees no difference.
 */
async function explainCalls(server: BenchServer, { requester, worker }: Pair): Promise<Explained[]> {
  const [task] = (await server.db.query(
    `SELECT id FROM tasks WHERE requester_identity_id = $1 AND worker_identity_id = $2 ORDER BY random() LIMIT 1`,
    [requester.id, worker.id],
  )) as Array<{ id: string }>;
  const url = `${server.baseUrl}/a2a/${worker.handle}`;
  const calls: Array<[string, (requestId: string) => Promise<Response>]> = [
    [
      'message/send',
      (id) =>
        fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': requester.key, 'x-request-id': id },
          body: sendBody(randomUUID()),
        }),
    ],
    [
      'tasks/get',
      (id) =>
        fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': requester.key, 'x-request-id': id },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: task.id } }),
        }),
    ],
    [
      'GET /api/v1/tasks?role=worker',
      (id) =>
        fetch(`${server.baseUrl}/api/v1/tasks?role=worker`, {
          headers: { 'x-api-key': worker.key, 'x-request-id': id },
        }),
    ],
    [
      'GET /api/v1/tasks?role=worker&cursor=(mid-list)',
      async (id) =>
        fetch(`${server.baseUrl}/api/v1/tasks?role=worker&cursor=${await midListCursor(server.db, worker)}`, {
          headers: { 'x-api-key': worker.key, 'x-request-id': id },
        }),
    ],
    // Not measured above; explained because their cost may follow the caller's list size.
    [
      'GET /api/v1/tasks (either role)',
      (id) => fetch(`${server.baseUrl}/api/v1/tasks`, { headers: { 'x-api-key': worker.key, 'x-request-id': id } }),
    ],
    [
      'ListTasks (v1.0, with totalSize)',
      (id) =>
        fetch(url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'a2a-version': '1.0',
            'x-api-key': requester.key,
            'x-request-id': id,
          },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ListTasks', params: {} }),
        }),
    ],
  ];
  const explained: Explained[] = [];
  const checkedIn = checkedInLabels();
  for (const [call, send] of calls) {
    const requestId = `bench-explain-${randomUUID()}`;
    const captured = await whileExplaining(requestId, async () => {
      const response = await send(requestId);
      if (response.status !== 200) {
        throw new Error(`${call} failed: ${response.status}`);
      }
      await response.text();
    });
    for (const c of captured) {
      const plan = await c.plan;
      explained.push({
        call,
        label: c.method ?? batchLabels.get(c.text) ?? checkedIn.get(normalize(c.text)) ?? '(unlabelled)',
        text: c.text.trim(),
        plan,
        executionMs: Number(/Execution Time: ([\d.]+) ms/.exec(plan)?.[1] ?? NaN),
      });
    }
  }
  return explained;
}

type Query = (this: Client, ...args: unknown[]) => unknown;
/** The driver's own conversion of a parameter to its text, for EXECUTE's literals. */
const { prepareValue } = require('pg/lib/utils') as { prepareValue: (value: unknown) => string | null };
interface Captured {
  /** The repository method that sent it (`@GenerateSql` methods are labelled while explaining). */
  method?: string;
  text: string;
  plan: Promise<string>;
}

const repositoryMethod = new AsyncLocalStorage<string>();

/**
 * Runs `work`, explaining every data statement sent on behalf of the request
 * `requestId`: on the statement's own connection, `EXPLAIN (ANALYZE, BUFFERS)` with its
 * parameters inside a savepoint (in a transaction) or a transaction (outside one) that
 * is rolled back, then the statement itself.
 */
async function whileExplaining(requestId: string, work: () => Promise<void>): Promise<Captured[]> {
  const captured: Captured[] = [];
  const inTransaction = new WeakMap<Client, boolean>();
  const proto = Client.prototype as unknown as { query: Query };
  const original = proto.query;
  const send = (client: Client, text: string, values?: unknown[]) =>
    original.call(client, values ? { text, values } : text) as Promise<{ rows: Array<Record<string, string>> }>;
  proto.query = function spied(this: Client, ...args: unknown[]) {
    const [config, values] = args as [string | { text?: string; values?: unknown[]; submit?: unknown }, unknown];
    const text = typeof config === 'string' ? config : config?.submit ? undefined : config?.text;
    if (typeof text !== 'string') {
      return original.apply(this, args);
    }
    if (/^\s*(START TRANSACTION|BEGIN)\b/i.test(text)) {
      inTransaction.set(this, true);
    } else if (/^\s*(COMMIT|ROLLBACK)\s*;?\s*$/i.test(text)) {
      inTransaction.set(this, false);
    }
    if (currentRequestContext()?.requestId !== requestId || !/^\s*(SELECT|WITH|INSERT|UPDATE|DELETE)\b/i.test(text)) {
      return original.apply(this, args);
    }
    const params = typeof config === 'string' ? (Array.isArray(values) ? values : []) : (config.values ?? []);
    const named = typeof config !== 'string' && Boolean((config as { name?: string }).name);
    const nested = inTransaction.get(this) === true;
    const plan = (async () => {
      await send(this, nested ? 'SAVEPOINT bench_explain' : 'BEGIN');
      try {
        // As the service runs it: a prepared statement with the generic plan PostgreSQL may keep
        // for it from its sixth run on (made without the values), an unnamed one planned for its values.
        let explain = `EXPLAIN (ANALYZE, BUFFERS) ${text}`;
        let explainValues: unknown[] | undefined = params;
        if (named) {
          await send(this, `SET LOCAL plan_cache_mode = force_generic_plan`);
          await send(this, `PREPARE bench_explained AS ${text}`);
          const literal = (value: unknown) => {
            const prepared = prepareValue(value);
            return prepared === null ? 'NULL' : this.escapeLiteral(prepared);
          };
          explain = `EXPLAIN (ANALYZE, BUFFERS) EXECUTE bench_explained${params.length > 0 ? `(${params.map(literal).join(', ')})` : ''}`;
          explainValues = undefined;
        }
        const result = await send(this, explain, explainValues);
        return result.rows.map((row) => row['QUERY PLAN']).join('\n');
      } catch (error) {
        return `EXPLAIN failed: ${(error as Error).message}`;
      } finally {
        await send(this, nested ? 'ROLLBACK TO SAVEPOINT bench_explain' : 'ROLLBACK');
        if (named) {
          await send(this, 'DEALLOCATE bench_explained').catch(() => undefined);
        }
      }
    })();
    captured.push({ method: repositoryMethod.getStore(), text, plan });
    const callback = typeof args[args.length - 1] === 'function' ? args[args.length - 1] : undefined;
    const then = plan.then(() => original.apply(this, args));
    return callback ? undefined : then;
  };
  const restore = labelRepositoryMethods();
  try {
    await work();
  } finally {
    proto.query = original;
    restore();
  }
  return captured;
}

/** Runs every `@GenerateSql` repository method inside its name (innermost wins), names write batches; returns the undo. */
function labelRepositoryMethods(): () => void {
  const undo: Array<() => void> = [];
  for (const { owner, method } of sqlExamples()) {
    const proto = owner.prototype as Record<string, (...args: unknown[]) => unknown>;
    const original = proto[method];
    const name = `${owner.name}.${method}`;
    proto[method] = function labelled(this: unknown, ...args: unknown[]) {
      return repositoryMethod.run(name, () => original.apply(this, args));
    };
    undo.push(() => (proto[method] = original));
  }
  // A write batch (src/database/write-batch.ts) is sent by Database.batch after the methods that
  // queued its members have returned: its statement is named after them.
  const members = new WeakMap<WriteBatch, string[]>();
  const batch = WriteBatch.prototype;
  const { write, statement } = batch;
  batch.write = function (this: WriteBatch, ...args: Parameters<WriteBatch['write']>) {
    members.set(this, [...(members.get(this) ?? []), repositoryMethod.getStore() ?? '(unlabelled)']);
    return write.apply(this, args);
  };
  batch.statement = function (this: WriteBatch) {
    const sent = statement.apply(this);
    batchLabels.set(sent.text, `write batch: ${[...new Set(members.get(this))].join(' + ')}`);
    return sent;
  };
  undo.push(() => Object.assign(batch, { write, statement }));
  return () => undo.reverse().forEach((fn) => fn());
}

/** Write batch statement text → the repository methods that queued its members. */
const batchLabels = new Map<string, string>();

/** A plan's nodes without their costs and timings. */
const shape = (plan: string) =>
  plan
    .split('\n')
    .filter((line, i) => i === 0 || line.includes('->'))
    .map((line) => line.replace(/\s+\(cost=.*$/, '').trim())
    .join('\n');

const normalize = (text: string) => text.replace(/\s+/g, ' ').replace(/;\s*$/, '').trim();

/** Statement text → the repository method it belongs to, from the checked-in src/database/queries/*.sql. */
function checkedInLabels(): Map<string, string> {
  const labels = new Map<string, string>();
  const folder = join(__dirname, '..', 'src', 'database', 'queries');
  for (const file of readdirSync(folder).filter((f) => f.endsWith('.sql'))) {
    const blocks = readFileSync(join(folder, file), 'utf8')
      .split(/^-- (?=\w+\.\w+)/m)
      .slice(1);
    for (const block of blocks) {
      const newline = block.indexOf('\n');
      const label = block.slice(0, newline).trim();
      for (const statement of block.slice(newline + 1).split(/;\s*$/m)) {
        const key = normalize(statement);
        if (key) {
          labels.set(key, labels.has(key) ? `${labels.get(key)} / ${label}` : label);
        }
      }
    }
  }
  return labels;
}
