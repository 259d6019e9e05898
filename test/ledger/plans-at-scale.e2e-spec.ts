import { Client } from 'pg';
import { Database } from '../../src/database/database';
import type { Sql } from '../../src/database/sql';
import { startApp, type TestApp } from '../support/app';
import { agentPair, rpc, submitTask, type Agent } from '../support/a2a';
import { apiKey, mintAdminKey, type ConsoleAccount } from '../support/fixtures';
import { urlFor } from '../support/database';

// The driver's own conversion of a parameter to its text (what it would send), for EXECUTE's literals.
const { prepareValue } = require('pg/lib/utils') as { prepareValue: (value: unknown) => string | null };

/**
 * The statements of the calls that read one task or a page of a list, planned as the
 * service may run them: a prepared statement, from its sixth run on, with the generic
 * plan PostgreSQL may keep (made without the parameters' values; forced here with
 * `plan_cache_mode = force_generic_plan`), a page of a list planned for its values
 * (sql.plannedPerRun). Against a ledger where the caller's pair holds 2,000 of 100,000
 * tasks of 3,000 requesters (other pairs' rows inserted straight into the tables, then
 * analyzed; enough rows for the indexes to be as tall as at a million, so that the
 * planner weighs them as it does there), each is run with the values the call used
 * (EXPLAIN ANALYZE, rolled back):
 * - a task named by id is read through the primary key — not through an index of the
 *   pair, whose generic cost looks the same but walks every task of the pair;
 * - a page of a list reads no more rows of each index than the page shows, plus one —
 *   for either role too, where one `requester = x OR worker = x` reads and sorts all.
 */
describe('plans at scale: a read costs the same however many rows the caller has', () => {
  let t: TestApp;
  let requester: Agent;
  let worker: Agent;
  let adminKey: string;
  let explainer: Client;
  const PAIR_TASKS = 2_000;
  const OTHER_TASKS = 98_000;

  beforeAll(async () => {
    t = await startApp({ RATE_LIMIT_REST_PER_MINUTE: '100000', RATE_LIMIT_PROTOCOL_PER_MINUTE: '100000' });
    let acme: ConsoleAccount;
    ({ acme, requester, worker } = await agentPair(t));
    adminKey = await mintAdminKey(t, acme);
    await t.db.transaction(async (m) => {
      // Foreign keys unchecked for the other pairs' made-up identities (this database is the test's own).
      await m.query(`SET LOCAL session_replication_role = replica`);
      await m.query(
        `CREATE TEMP TABLE seed ON COMMIT DROP AS
         SELECT i, gen_random_uuid() AS task_id, gen_random_uuid() AS context_id,
                CASE WHEN i <= $1 THEN $2::uuid ELSE md5('r' || i % 3000)::uuid END AS requester,
                CASE WHEN i <= $1 THEN $3::uuid ELSE md5('w' || i % 2999)::uuid END AS worker,
                CASE WHEN i <= $1 THEN $5::uuid ELSE md5('o' || i % 3000)::uuid END AS organization,
                now() - make_interval(secs => i) AS created_at
           FROM generate_series(1, $4) i`,
        [PAIR_TASKS, requester.id, worker.id, PAIR_TASKS + OTHER_TASKS, acme.organizationId],
      );
      await m.query(
        `INSERT INTO contexts (id, requester_identity_id, requester_handle, requester_organization_id,
                               worker_identity_id, worker_handle, worker_organization_id, created_at, updated_at)
         SELECT context_id, requester, 'seeded', organization, worker, 'seeded', organization, created_at, created_at FROM seed`,
      );
      await m.query(
        `INSERT INTO tasks (id, context_id, requester_identity_id, requester_handle, requester_organization_id,
                            worker_identity_id, worker_handle, worker_organization_id, origin_message_id, state,
                            status_timestamp, seq, created_at, updated_at)
         SELECT task_id, context_id, requester, 'seeded', organization, worker, 'seeded', organization, task_id::text,
                'submitted', created_at, 1, created_at, created_at
           FROM seed`,
      );
    });
    await t.db.query(`ANALYZE tasks, contexts`);
    explainer = new Client({ connectionString: urlFor(t.database) });
    await explainer.connect();
  });
  afterAll(async () => {
    await explainer?.end();
    await t?.close();
  });

  /** The statements `call` sends through the Database (each with the values it used). */
  async function statementsOf(call: () => Promise<unknown>): Promise<Sql[]> {
    const sent: Sql[] = [];
    const database = Database.prototype as unknown as { run: (query: Sql, ...rest: unknown[]) => Promise<unknown> };
    const run = database.run;
    const spy = jest.spyOn(database, 'run').mockImplementation(function (this: unknown, query: Sql, ...rest) {
      sent.push(query);
      return run.call(this, query, ...rest);
    });
    try {
      await call();
    } finally {
      spy.mockRestore();
    }
    return sent;
  }

  interface PlanNode {
    'Node Type': string;
    'Relation Name'?: string;
    'Index Name'?: string;
    'Actual Rows': number;
    'Actual Loops': number;
    'Rows Removed by Filter'?: number;
    Plans?: PlanNode[];
  }

  /**
   * The statement's plan as the service may run it, run with its values (EXPLAIN ANALYZE,
   * in a transaction rolled back): planned for the values when the statement is planned
   * on each run (sql.plannedPerRun), else the generic plan of a prepared statement.
   */
  async function planOf({ text, values, plannedPerRun }: Sql): Promise<PlanNode[]> {
    const literal = (value: unknown) => {
      const prepared = prepareValue(value instanceof Date ? value.toISOString() : value);
      return prepared === null ? 'NULL' : explainer.escapeLiteral(prepared);
    };
    await explainer.query('BEGIN');
    try {
      let rows: Array<Record<string, unknown>>;
      if (plannedPerRun) {
        ({ rows } = await explainer.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, [...values]));
      } else {
        await explainer.query(`SET LOCAL plan_cache_mode = force_generic_plan`);
        await explainer.query(`PREPARE explained AS ${text}`);
        const args = values.length > 0 ? `(${values.map(literal).join(', ')})` : '';
        ({ rows } = await explainer.query(`EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE explained${args}`));
      }
      const nodes: PlanNode[] = [];
      const walk = (node: PlanNode) => (nodes.push(node), node.Plans?.forEach(walk));
      walk((rows[0]['QUERY PLAN'] as Array<{ Plan: PlanNode }>)[0].Plan);
      return nodes;
    } finally {
      await explainer.query('ROLLBACK');
      await explainer.query('DEALLOCATE ALL');
    }
  }

  /** The scans of `table` in the generic plans of the statements that `call` sends about it. */
  async function scansOf(table: string, call: () => Promise<unknown>): Promise<PlanNode[]> {
    const statements = (await statementsOf(call)).filter(
      (s) => /^\s*(SELECT|WITH)\b/.test(s.text) && new RegExp(`\\b(FROM|JOIN) ${table}\\b`).test(s.text),
    );
    expect(statements.length).toBeGreaterThan(0);
    const scans: PlanNode[] = [];
    for (const statement of statements) {
      scans.push(...(await planOf(statement)).filter((node) => node['Relation Name'] === table));
    }
    return scans;
  }

  it('GetTask reads the task through its primary key', async () => {
    const task = await submitTask(t, requester, worker);
    const scans = await scansOf('tasks', async () => {
      const res = await rpc(t, worker.handle, requester.key, 'tasks/get', { id: task.id }).expect(200);
      expect(res.body.result?.id).toBe(task.id);
    });
    expect(scans.map((s) => s['Index Name'])).toEqual(['tasks_pkey']);
    expect(scans[0]['Actual Rows']).toBe(1);
  });

  // A guard: with the caller's side as `requester = x OR worker = x`, the kept plan took the primary key before taskByKey too.
  it('GET /api/v1/tasks/{id} reads the task through its primary key', async () => {
    const task = await submitTask(t, requester, worker);
    const scans = await scansOf('tasks', async () => {
      await t.http().get(`/api/v1/tasks/${task.id}`).set(apiKey(requester.key)).expect(200);
    });
    expect(scans.map((s) => s['Index Name'])).toEqual(['tasks_pkey']);
  });

  it('a cancel locks the task through its primary key', async () => {
    const task = await submitTask(t, requester, worker);
    const scans = await scansOf('tasks', async () => {
      const res = await rpc(t, worker.handle, requester.key, 'tasks/cancel', { id: task.id }).expect(200);
      expect(res.body.result?.status?.state).toBe('canceled');
    });
    expect(scans.length).toBeGreaterThan(0);
    for (const scan of scans) {
      expect(scan['Index Name']).toBe('tasks_pkey');
    }
  });

  it('a page of a list is planned for its values (sent unnamed); a task read by id is prepared', async () => {
    const task = await submitTask(t, requester, worker);
    const names: Array<[string, string | undefined]> = [];
    const query = Client.prototype.query as (...args: unknown[]) => unknown;
    const spy = jest.spyOn(Client.prototype, 'query').mockImplementation(function (this: Client, ...args: unknown[]) {
      const config = args[0] as { text?: string; name?: string; submit?: unknown };
      const text = typeof config === 'object' && !config.submit ? (config.text ?? '') : '';
      if (/FROM tasks t WHERE .* LIMIT 51$/s.test(text.trim())) {
        names.push(['page', config.name]);
      }
      if (/FROM \(SELECT \* FROM tasks WHERE id = \$1 OFFSET 0\) t/.test(text)) {
        names.push(['by id', config.name]);
      }
      return query.apply(this, args) as never;
    });
    try {
      await t.http().get('/api/v1/tasks?role=requester').set(apiKey(requester.key)).expect(200);
      await t.http().get(`/api/v1/tasks/${task.id}`).set(apiKey(requester.key)).expect(200);
    } finally {
      spy.mockRestore();
    }
    expect(names).toEqual([
      ['page', undefined],
      ['by id', expect.stringMatching(/^s_/)],
    ]);
  });

  it.each([
    ['contexts', 'contexts', '/api/v1/contexts', 'agent'],
    ['tasks, either role', 'tasks', '/api/v1/tasks', 'agent'],
    ['tasks as requester', 'tasks', '/api/v1/tasks?role=requester', 'agent'],
    // The organization is on both sides of its own tasks: each side's walk meets every one of them.
    ["an organization's contexts", 'contexts', '/api/v1/contexts', 'admin'],
    ["an organization's tasks, either role", 'tasks', '/api/v1/tasks', 'admin'],
  ])('a page of %s reads at most the page and one more row of each index', async (_, table, path, key) => {
    const scans = await scansOf(table, async () => {
      const res = await t
        .http()
        .get(path)
        .set(apiKey(key === 'admin' ? adminKey : requester.key))
        .expect(200);
      expect(res.body.next_cursor).toEqual(expect.any(String)); // a full page, with more to come
    });
    expect(scans.length).toBeGreaterThan(0);
    for (const scan of scans) {
      const read = (scan['Actual Rows'] + (scan['Rows Removed by Filter'] ?? 0)) * scan['Actual Loops'];
      expect(read).toBeLessThanOrEqual(51);
    }
  });
});
