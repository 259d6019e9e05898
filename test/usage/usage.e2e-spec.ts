import { startApp, type TestApp } from '../support/app';
import { enabledAgent, reply, rpc, submitTask, v03Message, type Agent } from '../support/a2a';
import { eventually } from '../support/eventually';
import { apiKey, bearer, mintAdminKey, signup, type ConsoleAccount } from '../support/fixtures';
import { freePort } from '../support/server-process';
import { MetricsServer } from '../../src/metrics/metrics.server';
import { BILLED_USAGE, startUpstreamAgent, type UpstreamAgent } from '../support/upstream-agent';

/**
 * Usage (docs/api.md §18): what a worker reports with its REST replies (validated) or an
 * upstream agent with its final answer, what the service measures as a task ends, the
 * rollups behind `GET /api/v1/usage` (JSON and CSV, the caller's scope), and the monthly
 * cost budget that reported costs use up.
 */
describe('usage', () => {
  let t: TestApp;
  let acme: ConsoleAccount;
  let globex: ConsoleAccount;
  let acmeAdmin: string;
  let globexAdmin: string;
  let upstream: UpstreamAgent;

  beforeAll(async () => {
    t = await startApp({ WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true', METRICS_PORT: '0' });
    upstream = await startUpstreamAgent(await freePort());
    acme = await signup(t, 'Acme');
    globex = await signup(t, 'Globex');
    acmeAdmin = await mintAdminKey(t, acme);
    globexAdmin = await mintAdminKey(t, globex);
  });
  afterAll(async () => {
    await upstream.close();
    await t.close();
  });

  const open = (account: ConsoleAccount) => enabledAgent(t, account, { filterMode: 'blacklist' });
  const treeOf = async (taskId: string, key: string) =>
    (await t.http().get(`/api/v1/tasks/${taskId}/tree`).set(apiKey(key)).expect(200)).body;
  const usage = (key: string, query: string) => t.http().get(`/api/v1/usage?${query}`).set(apiKey(key));

  it('adds up what REST replies report; measures the task as it ends; rolls it up', async () => {
    const [requester, worker] = [await open(acme), await open(globex)];
    const task = await submitTask(t, requester, worker);
    await reply(t, task.id, worker.key, {
      state: 'working',
      usage: { input_tokens: 100, output_tokens: 20, cost: { amount: '0.25', currency: 'EUR' } },
    }).expect(200);
    // A reply may carry usage alone.
    await reply(t, task.id, worker.key, { usage: { output_tokens: 5 } }).expect(200);
    await reply(t, task.id, worker.key, {
      state: 'completed',
      message: {
        parts: [
          { kind: 'text', text: 'done' },
          { kind: 'text', text: 'and more' },
        ],
      },
      artifacts: [{ name: 'out', parts: [{ kind: 'text', text: 'result' }] }],
      usage: { input_tokens: 1, output_tokens: 2, cost: { amount: '0.5', currency: 'EUR' } },
    }).expect(200);

    const node = (await treeOf(task.id, acmeAdmin)).task;
    expect(node.usage).toMatchObject({
      input_tokens: 101,
      output_tokens: 27,
      cost: { amount: '0.75', currency: 'EUR' },
      messages: 2,
      parts: 4,
      artifact_bytes: Buffer.byteLength(JSON.stringify([{ text: 'result' }])),
    });
    expect(node.usage.duration_ms).toBeGreaterThanOrEqual(0);
    expect(Object.keys(node.usage.state_ms).sort()).toEqual(['submitted', 'working']);

    // After the end: nothing more to report.
    const late = await reply(t, task.id, worker.key, { usage: { input_tokens: 1 } }).expect(409);
    expect(late.body.code).toBe('task_terminal');

    const mine = await usage(requester.key, 'group_by=identity').expect(200);
    expect(mine.body.groups).toEqual([
      expect.objectContaining({
        key: requester.id,
        label: requester.handle,
        role: 'requester',
        tasks: 1,
        completed: 1,
        messages: 2,
        input_tokens: 101,
        output_tokens: 27,
        cost: [{ amount: '0.75', currency: 'EUR' }],
      }),
    ]);
    // The worker's organization sees the same task from its side.
    const theirs = await usage(globexAdmin, `group_by=peer&identity=${worker.handle}`).expect(200);
    expect(theirs.body.groups).toEqual([
      expect.objectContaining({ key: requester.id, label: requester.handle, role: 'worker', tasks: 1 }),
    ]);
  });

  it.each([
    [{ input_tokens: -1 }],
    [{ input_tokens: 1.5 }],
    [{ output_tokens: '3' }],
    [{ cost: { amount: '1,5', currency: 'EUR' } }],
    [{ cost: { amount: '1.5', currency: 'eur' } }],
    [{ cost: { amount: '1.5' } }],
    [{ cost: 2 }],
    [{ tokens: 3 }],
    ['lots'],
  ])('a reply with bad usage is a 400 and changes nothing: %j', async (bad) => {
    const [requester, worker] = [await open(acme), await open(acme)];
    const task = await submitTask(t, requester, worker);
    const res = await reply(t, task.id, worker.key, { state: 'completed', usage: bad }).expect(400);
    expect(res.body.code).toBe('validation_failed');
    expect((await treeOf(task.id, acmeAdmin)).task.state).toBe('submitted');
  });

  it('a cost in a second currency is refused with 409 and nothing of the reply is kept', async () => {
    const [requester, worker] = [await open(acme), await open(acme)];
    const task = await submitTask(t, requester, worker);
    await reply(t, task.id, worker.key, { usage: { cost: { amount: '1', currency: 'USD' } } }).expect(200);
    const mixed = await reply(t, task.id, worker.key, {
      state: 'completed',
      usage: { cost: { amount: '1', currency: 'EUR' } },
    }).expect(409);
    expect(mixed.body.code).toBe('usage_currency_mismatch');
    const node = (await treeOf(task.id, acmeAdmin)).task;
    expect({ state: node.state, cost: node.usage.cost }).toEqual({
      state: 'submitted',
      cost: { amount: '1', currency: 'USD' },
    });
  });

  it('counts what an upstream agent reports with its final answer, once', async () => {
    const requester = await open(acme);
    const bridged = await open(acme);
    await t
      .http()
      .put(`/api/v1/identities/${bridged.handle}/upstream`)
      .set(bearer(acme))
      .send({ url: upstream.url, card_url: upstream.cardUrl })
      .expect(200);
    const res = await rpc(t, bridged.handle, requester.key, 'message/send', {
      message: v03Message('bill me'),
      configuration: { blocking: true },
    }).expect(200);
    const taskId = res.body.result.id as string;
    const done = await eventually(
      () => treeOf(taskId, acmeAdmin),
      (tree) => tree.task.state === 'completed',
    );
    expect(done.task.usage).toMatchObject({
      input_tokens: BILLED_USAGE.input_tokens,
      output_tokens: BILLED_USAGE.output_tokens,
      cost: BILLED_USAGE.cost,
    });
    // An answer without usage reports none.
    const plain = await rpc(t, bridged.handle, requester.key, 'message/send', {
      message: v03Message('hello'),
      configuration: { blocking: true },
    }).expect(200);
    const plainDone = await eventually(
      () => treeOf(plain.body.result.id, acmeAdmin),
      (tree) => tree.task.state === 'completed',
    );
    expect(plainDone.task.usage).toMatchObject({ input_tokens: 0, output_tokens: 0, cost: null });
  });

  describe('GET /api/v1/usage', () => {
    let requester: Agent;
    let worker: Agent;
    let outsider: Agent;

    beforeAll(async () => {
      [requester, worker, outsider] = [await open(acme), await open(acme), await open(globex)];
      for (const state of ['completed', 'failed', 'rejected']) {
        const task = await submitTask(t, requester, worker);
        await reply(t, task.id, worker.key, { state, usage: { input_tokens: 10 } }).expect(200);
      }
      const canceled = await submitTask(t, requester, worker);
      await rpc(t, worker.handle, requester.key, 'tasks/cancel', { id: canceled.id }).expect(200);
      await submitTask(t, requester, worker); // open: not rolled up until it ends
    });

    it('groups by identity, day and hour; an admin key sees its organization, filtered by identity', async () => {
      const byIdentity = await usage(acmeAdmin, `group_by=identity&identity=${requester.handle}`).expect(200);
      expect(byIdentity.body.groups).toEqual([
        expect.objectContaining({
          key: requester.id,
          role: 'requester',
          tasks: 4,
          completed: 1,
          failed: 1,
          rejected: 1,
          canceled: 1,
          input_tokens: 30,
          cost: [],
        }),
      ]);
      const today = new Date().toISOString().slice(0, 10);
      const byDay = await usage(acmeAdmin, `group_by=day&identity=${worker.handle}`).expect(200);
      expect(byDay.body.groups).toEqual([expect.objectContaining({ key: today, role: 'worker', tasks: 4 })]);
      const byHour = await usage(requester.key, 'group_by=hour').expect(200);
      expect(byHour.body.groups[0].key).toMatch(/^\d{4}-\d\d-\d\dT\d\d:00:00Z$/);
      const byOrganization = await usage(acmeAdmin, `group_by=organization&identity=${worker.handle}`).expect(200);
      expect(byOrganization.body.groups).toEqual([
        expect.objectContaining({ key: acme.organizationId, label: 'Acme', role: 'worker', tasks: 4 }),
      ]);
      // A range before the tasks: nothing.
      const before = await usage(acmeAdmin, 'from=2020-01-01T00:00:00Z&to=2020-01-02T00:00:00Z').expect(200);
      expect(before.body.groups).toEqual([]);
    });

    it('answers CSV for Accept: text/csv or format=csv', async () => {
      const csv = await t
        .http()
        .get(`/api/v1/usage?group_by=identity&identity=${requester.handle}`)
        .set({ ...apiKey(acmeAdmin), Accept: 'text/csv' })
        .expect(200);
      expect(csv.headers['content-type']).toMatch(/^text\/csv/);
      const lines = csv.text.trim().split('\r\n');
      expect(lines[0]).toBe(
        'key,label,role,tasks,completed,failed,canceled,rejected,messages,parts,artifact_bytes,duration_ms,input_tokens,output_tokens,cost_amount,cost_currency',
      );
      expect(lines[1]).toMatch(new RegExp(`^${requester.id},${requester.handle},requester,4,1,1,1,1,`));
      const viaQuery = await usage(acmeAdmin, `group_by=identity&format=csv&identity=${requester.handle}`).expect(200);
      expect(viaQuery.text).toBe(csv.text);
    });

    it("keeps to the caller's scope: an agent key its own identity, another organization nothing of it", async () => {
      await usage(requester.key, `identity=${worker.handle}`)
        .expect(403)
        .expect(({ body }) => expect(body.code).toBe('identity_not_own'));
      await usage(outsider.key, `identity=${requester.handle}`).expect(404);
      await usage(globexAdmin, `identity=${requester.handle}`).expect(404);
      const others = await usage(globexAdmin, 'group_by=identity').expect(200);
      expect(JSON.stringify(others.body)).not.toContain(requester.id);
    });

    it.each([
      'group_by=week',
      'from=yesterday',
      'from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z',
      'from=2020-01-01T00:00:00Z&to=2026-01-01T00:00:00Z',
      'format=xml',
      'identity=',
      // Longer than any handle (63).
      `identity=${'a'.repeat(64)}`,
    ])('a bad query is a 400: %s', async (query) => {
      const res = await usage(acmeAdmin, query).expect(400);
      expect(res.body.code).toBe('validation_failed');
    });
  });

  describe('GET /api/v1/usage/trees', () => {
    let buyer: Agent;
    let planner: Agent;
    let big: string;
    let small: string;
    const trees = (key: string, query = '') => t.http().get(`/api/v1/usage/trees?${query}`).set(apiKey(key));
    const delegate = async (from: Agent, to: Agent, parent: string) =>
      (
        await rpc(t, to.handle, from.key, 'message/send', {
          message: v03Message('part of it', { referenceTaskIds: [parent] }),
          configuration: { blocking: false },
        }).expect(200)
      ).body.result.id as string;

    beforeAll(async () => {
      [buyer, planner] = [await open(acme), await open(acme)];
      const [billing, printer] = [await open(globex), await open(globex)];
      // A tree of four: buyer → planner → billing (Globex) → printer (Globex), and planner → printer.
      big = (await submitTask(t, buyer, planner)).id;
      const child = await delegate(planner, billing, big);
      const grandchild = await delegate(billing, printer, child);
      const second = await delegate(planner, printer, big);
      await reply(t, grandchild, printer.key, {
        state: 'completed',
        usage: { input_tokens: 900, output_tokens: 100, cost: { amount: '0.02', currency: 'USD' } },
      }).expect(200);
      await reply(t, second, printer.key, {
        usage: { input_tokens: 50, cost: { amount: '1', currency: 'EUR' } },
      }).expect(200);
      await reply(t, big, planner.key, {
        usage: { output_tokens: 7, cost: { amount: '0.01', currency: 'USD' } },
      }).expect(200);
      // A tree of two, and a task alone (no tree to list).
      small = (await submitTask(t, buyer, planner)).id;
      await delegate(planner, billing, small);
      await submitTask(t, buyer, planner);
    });

    it("lists the largest trees first, each with the whole tree's totals, another organization's tasks included", async () => {
      const res = await trees(acmeAdmin, `identity=${buyer.handle}`).expect(200);
      expect(res.body.trees).toEqual([
        {
          id: big,
          requester: { id: buyer.id, agent_handle: buyer.handle, organization_id: acme.organizationId },
          worker: { id: planner.id, agent_handle: planner.handle, organization_id: acme.organizationId },
          state: 'submitted',
          created_at: expect.any(String),
          tasks: 4,
          input_tokens: 950,
          output_tokens: 107,
          cost: [
            { amount: '1', currency: 'EUR' },
            { amount: '0.03', currency: 'USD' },
          ],
        },
        expect.objectContaining({ id: small, tasks: 2, input_tokens: 0, cost: [] }),
      ]);
      // The same through the root's own tree view.
      const tree = await t.http().get(`/api/v1/tasks/${big}/tree`).set(apiKey(acmeAdmin)).expect(200);
      expect(tree.body.totals).toMatchObject({ tasks: 4, input_tokens: 950, output_tokens: 107 });
      const first = await trees(acmeAdmin, `identity=${planner.handle}&limit=1`).expect(200);
      expect(first.body.trees.map((tree: { id: string }) => tree.id)).toEqual([big]);
      // An agent key: the trees its identity's side may read.
      const own = await trees(buyer.key).expect(200);
      expect(own.body.trees.map((tree: { id: string }) => tree.id)).toEqual([big, small]);
    });

    it("keeps to the range and to the caller's side", async () => {
      const before = await trees(acmeAdmin, 'from=2020-01-01T00:00:00Z&to=2020-01-02T00:00:00Z').expect(200);
      expect(before.body.trees).toEqual([]);
      // Globex's identities work in these trees, but their roots are Acme's.
      const globexView = await trees(globexAdmin).expect(200);
      expect(JSON.stringify(globexView.body)).not.toContain(big);
      expect(JSON.stringify(globexView.body)).not.toContain(small);
    });

    it("another organization's larger tree is not listed and changes none of the caller's figures", async () => {
      const before = {
        acme: (await trees(acmeAdmin).expect(200)).body.trees,
        planner: (await trees(planner.key).expect(200)).body.trees,
      };
      const initech = await signup(t, 'Initech');
      const [boss, lead, helper] = [await open(initech), await open(initech), await open(initech)];
      // Seven tasks, more tokens than any of Acme's: one of them worked by Acme's planner.
      const root = (await submitTask(t, boss, lead)).id;
      for (let i = 0; i < 5; i++) {
        const child = await delegate(lead, helper, root);
        await reply(t, child, helper.key, { usage: { input_tokens: 10_000, output_tokens: 1_000 } }).expect(200);
      }
      const atAcme = await delegate(lead, planner, root);
      await reply(t, atAcme, planner.key, { usage: { input_tokens: 5 } }).expect(200);

      const after = {
        acme: (await trees(acmeAdmin).expect(200)).body.trees,
        planner: (await trees(planner.key).expect(200)).body.trees,
      };
      expect(after).toEqual(before);
      expect(JSON.stringify(after)).not.toContain(root);
      const theirs = await trees(await mintAdminKey(t, initech)).expect(200);
      expect(theirs.body.trees).toEqual([
        expect.objectContaining({ id: root, tasks: 7, input_tokens: 50_005, output_tokens: 5_000 }),
      ]);
    });

    it.each([
      'limit=0',
      'limit=51',
      'limit=ten',
      'from=yesterday',
      'from=2020-01-01T00:00:00Z&to=2026-01-01T00:00:00Z',
    ])('a bad query is a 400: %s', async (query) => {
      const res = await trees(acmeAdmin, query).expect(400);
      expect(res.body.code).toBe('validation_failed');
    });
  });

  it('a monthly cost budget: reported costs use it up; at 100% the next send is refused until the month ends', async () => {
    const [requester, worker] = [await open(acme), await open(acme)];
    await t
      .http()
      .patch(`/api/v1/identities/${requester.handle}/settings`)
      .set(apiKey(acmeAdmin))
      .send({ monthly_cost_budget: { amount: '1.00', currency: 'USD' } })
      .expect(200);
    const first = await submitTask(t, requester, worker);
    await reply(t, first.id, worker.key, {
      state: 'completed',
      usage: { cost: { amount: '0.85', currency: 'USD' } },
    }).expect(200);
    // Another currency is not counted against a USD budget.
    const inEuros = await submitTask(t, requester, worker);
    await reply(t, inEuros.id, worker.key, {
      state: 'completed',
      usage: { cost: { amount: '9', currency: 'EUR' } },
    }).expect(200);
    const second = await submitTask(t, requester, worker);
    await reply(t, second.id, worker.key, {
      state: 'completed',
      usage: { cost: { amount: '0.15', currency: 'USD' } },
    }).expect(200);
    const refused = await rpc(t, worker.handle, requester.key, 'message/send', {
      message: v03Message('one more'),
      configuration: { blocking: false },
    }).expect(429);
    const now = new Date();
    const monthEnd = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString();
    expect(refused.body.error.data).toMatchObject({ reason: 'quota_exceeded', resets_at: monthEnd });
    expect(refused.body.error.message).toMatch(/monthly cost budget of 1 reached; it resets at/);
    type Threshold = { type: string; data: { identity: { id: string }; threshold: number; budget: string } };
    const thresholds = await eventually(
      async () =>
        (
          (await t.http().get('/api/v1/events?limit=200').set(apiKey(acmeAdmin)).expect(200)).body.events as Threshold[]
        ).filter((e) => e.type === 'usage.threshold' && e.data.identity.id === requester.id),
      (events) => events.length === 2,
    );
    expect(thresholds.map((e) => e.data)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ budget: 'monthly_cost_budget', threshold: 80, limit: '1' }),
        expect.objectContaining({ budget: 'monthly_cost_budget', threshold: 100, used: '1' }),
      ]),
    );
    // A month's threshold names its month: from its first day to the next month's (UTC).
    const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString();
    for (const event of thresholds) {
      expect(event.data).toMatchObject({ period_start: monthStart, resets_at: monthEnd });
    }
  });

  it('counts reported tokens and cost, and quota refusals, in Prometheus', async () => {
    const scrape = async () => (await fetch(`http://127.0.0.1:${t.app.get(MetricsServer).port}/metrics`)).text();
    const value = (text: string, series: string) =>
      Number(new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
    const before = await scrape();
    const [requester, worker] = [await open(acme), await open(acme)];
    const task = await submitTask(t, requester, worker);
    await reply(t, task.id, worker.key, {
      state: 'completed',
      usage: { input_tokens: 7, output_tokens: 3, cost: { amount: '0.5', currency: 'GBP' } },
    }).expect(200);
    await t
      .http()
      .patch(`/api/v1/identities/${requester.handle}/settings`)
      .set(apiKey(acmeAdmin))
      .send({ daily_task_quota: 1 })
      .expect(200);
    // Counted from now on: one send fits, the next does not.
    await submitTask(t, requester, worker);
    await rpc(t, worker.handle, requester.key, 'message/send', {
      message: v03Message('over'),
      configuration: { blocking: false },
    }).expect(429);
    const after = await scrape();
    const delta = (series: string) => value(after, series) - value(before, series);
    expect({
      input: delta('a2a_usage_reported_tokens_total{direction="input"}'),
      output: delta('a2a_usage_reported_tokens_total{direction="output"}'),
      cost: delta('a2a_usage_reported_cost_total{currency="GBP"}'),
      refused: delta('a2a_quota_refusals_total'),
    }).toEqual({ input: 7, output: 3, cost: 0.5, refused: 1 });
  });
});
