import { randomUUID } from 'node:crypto';
import type { AgentKeyPrincipal } from '../../src/common/principal';
import { LedgerService } from '../../src/ledger/ledger.service';
import { TasksService } from '../../src/ledger/tasks.service';
import type { TaskPair } from '../../src/ledger/task-records';
import { startApp, type TestApp } from '../support/app';
import { enabledAgent, type Agent } from '../support/a2a';
import { apiKey, mintAdminKey, signup, type ConsoleAccount } from '../support/fixtures';
import { prng } from '../support/prng';

const SEED = Number(process.env.ROLLUP_SEED ?? 20261205);
const TASKS = 2_000;
const AT_ONCE = 25;

/**
 * The rollups (docs/api.md §18) after a randomized run of 2,000 tasks through the
 * ledger's own send, reply and cancel paths — concurrent tasks of a few pairs across two
 * organizations, random parts, artifacts, reports in two currencies, every ending and
 * some tasks left open — equal a recomputation from the raw ledger (messages, artifacts,
 * task times) and the reports the run made. `ROLLUP_SEED=n` replays a run.
 */
describe(`rollups match the raw ledger (seed ${SEED})`, () => {
  let t: TestApp;
  let acme: ConsoleAccount;
  let globex: ConsoleAccount;
  let agents: Agent[];

  beforeAll(async () => {
    t = await startApp();
    acme = await signup(t, 'Acme');
    globex = await signup(t, 'Globex');
    agents = [];
    for (const account of [acme, acme, acme, globex, globex, globex]) {
      agents.push(await enabledAgent(t, account));
    }
  });
  afterAll(() => t.close());

  it('after a randomized run, usage_hourly equals a recomputation, row for row', async () => {
    const random = prng(SEED);
    const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)];
    const ledger = t.app.get(LedgerService);
    const tasks = t.app.get(TasksService);
    const organizationOf = (agent: Agent) => (agents.indexOf(agent) < 3 ? acme.organizationId : globex.organizationId);
    const participant = (agent: Agent) => ({
      id: agent.id,
      handle: agent.handle,
      organizationId: organizationOf(agent),
    });
    const principal = (agent: Agent): AgentKeyPrincipal => ({
      kind: 'agent',
      id: randomUUID(),
      organizationId: organizationOf(agent),
      identity: { id: agent.id, handle: agent.handle, claimed: true, enabled: true },
    });
    const text = (n: number) => Array.from({ length: n }, (_, i) => ({ kind: 'text', text: `part ${i} ${random()}` }));
    /** What the run reported, per task: the recomputation's side of reported usage. */
    const reported = new Map<
      string,
      { input: number; output: number; cents: number; currency: string; reports: number }
    >();

    const lifecycle = async () => {
      const requester = pick(agents);
      const worker = pick(agents.filter((agent) => agent !== requester));
      const pair: TaskPair = { requester: participant(requester), worker: participant(worker) };
      const parts = text(1 + Math.floor(random() * 4)).map(({ text: value }) => ({ text: value }));
      const { task } = await ledger.start(
        pair,
        {
          message: { messageId: randomUUID(), parts, metadata: null, extensions: [], referenceTaskIds: [] },
          metadata: null,
          skill: null,
        },
        { historyLength: 0, artifacts: false },
      );
      const currency = pick(['', 'USD', 'EUR']);
      const tally = { input: 0, output: 0, cents: 0, currency, reports: 0 };
      const usage = () => {
        const report = {
          input_tokens: Math.floor(random() * 5000),
          output_tokens: Math.floor(random() * 800),
          ...(currency
            ? { cost: { amount: `0.${String(Math.floor(random() * 100)).padStart(2, '0')}`, currency } }
            : {}),
        };
        tally.reports += 1;
        tally.input += report.input_tokens;
        tally.output += report.output_tokens;
        tally.cents += report.cost ? Number(report.cost.amount.slice(2)) : 0;
        return report;
      };
      const as = principal(worker);
      if (random() < 0.5) {
        await tasks.reply(as, task.id, { state: 'working', usage: usage() }, undefined);
      }
      if (random() < 0.4) {
        const artifacts = [{ name: 'out', parts: text(1 + Math.floor(random() * 3)) }];
        await tasks.reply(as, task.id, { artifacts }, undefined);
      }
      const ending = random();
      if (ending < 0.1) {
        reported.set(task.id, tally);
        return; // left open
      }
      if (ending < 0.25) {
        await ledger.cancel(pair, task.id, { historyLength: 0, artifacts: false });
      } else {
        const state = ending < 0.8 ? 'completed' : ending < 0.9 ? 'failed' : 'rejected';
        const message = random() < 0.7 ? { parts: text(1 + Math.floor(random() * 3)) } : undefined;
        await tasks.reply(as, task.id, { state, message, usage: random() < 0.8 ? usage() : undefined }, undefined);
      }
      reported.set(task.id, tally);
    };

    for (let done = 0; done < TASKS; done += AT_ONCE) {
      await Promise.all(Array.from({ length: Math.min(AT_ONCE, TASKS - done) }, lifecycle));
    }
    expect(reported.size).toBe(TASKS);

    // The recomputation: the raw ledger's rows of every task that ended, and what the run reported for it.
    const raw = (await t.db.query(
      `SELECT t.id, to_char(date_trunc('hour', t.created_at, 'UTC') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24') AS hour,
              t.requester_identity_id AS requester, t.worker_identity_id AS worker, t.state,
              (SELECT count(*) FROM messages m WHERE m.task_id = t.id)::int AS messages,
              ((SELECT COALESCE(sum(jsonb_array_length(m.parts)), 0) FROM messages m WHERE m.task_id = t.id)
               + (SELECT COALESCE(sum(jsonb_array_length(a.parts)), 0) FROM artifacts a WHERE a.task_id = t.id))::int AS parts,
              (SELECT COALESCE(sum(a.content_bytes), 0) FROM artifacts a WHERE a.task_id = t.id)::int AS artifact_bytes,
              round(extract(epoch FROM t.updated_at - t.created_at) * 1000)::int AS duration_ms
         FROM tasks t
        WHERE t.requester_identity_id = ANY($1) AND t.state IN ('completed', 'failed', 'canceled', 'rejected')`,
      [agents.map((agent) => agent.id)],
    )) as Array<Record<string, string | number>>;
    type Sums = Record<string, number>;
    const expected = new Map<string, Sums>();
    for (const row of raw) {
      const tally = reported.get(row.id as string)!;
      // A task's rollup currency: that of its reported costs ('' when it reported none).
      const key = [row.hour, row.requester, row.worker, tally.reports > 0 ? tally.currency : ''];
      const sums = expected.get(key.join('|')) ?? {};
      const add = (name: string, value: number) => (sums[name] = (sums[name] ?? 0) + value);
      add('tasks', 1);
      add(row.state as string, 1);
      add('messages', row.messages as number);
      add('parts', row.parts as number);
      add('artifact_bytes', row.artifact_bytes as number);
      add('duration_ms', row.duration_ms as number);
      add('input_tokens', tally.input);
      add('output_tokens', tally.output);
      add('cents', tally.cents);
      expected.set(key.join('|'), sums);
    }
    const nonZero = (sums: Sums) => Object.fromEntries(Object.entries(sums).filter(([, value]) => value !== 0));
    const rolled = (await t.db.query(
      `SELECT to_char(hour AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24') AS hour, requester_identity_id AS requester,
              worker_identity_id AS worker, currency, tasks, completed, failed, canceled, rejected, messages::int,
              parts::int, artifact_bytes::int, duration_ms::int, input_tokens::int, output_tokens::int,
              round(cost * 100)::int AS cents
         FROM usage_hourly WHERE requester_identity_id = ANY($1)`,
      [agents.map((agent) => agent.id)],
    )) as Array<Record<string, string | number>>;
    const actual = new Map<string, Sums>();
    for (const row of rolled) {
      const { hour, requester, worker, currency, ...sums } = row;
      actual.set([hour, requester, worker, currency].join('|'), nonZero(sums as Sums));
    }
    expect(Object.fromEntries(actual)).toEqual(
      Object.fromEntries([...expected].map(([key, sums]) => [key, nonZero(sums)])),
    );
    expect(raw.length).toBeGreaterThan(TASKS * 0.8);

    // The route sums the same rows: every task that ended, from the requesters' side of Acme's identities.
    const admin = await mintAdminKey(t, acme);
    const res = await t.http().get('/api/v1/usage?group_by=identity').set(apiKey(admin)).expect(200);
    const acmeIds = new Set(agents.slice(0, 3).map((agent) => agent.id));
    const asRequesters = (res.body.groups as Array<{ role: string; tasks: number }>)
      .filter((group) => group.role === 'requester')
      .reduce((sum, group) => sum + group.tasks, 0);
    expect(asRequesters).toBe(raw.filter((row) => acmeIds.has(row.requester as string)).length);
  }, 120_000);
});
