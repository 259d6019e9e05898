import { randomUUID } from 'node:crypto';
import { startApp, type TestApp } from '../support/app';
import { enabledAgent, openStream, reply, rpc, v03Message, type Agent } from '../support/a2a';
import { apiKey, bearer, mintAdminKey, signup, type ConsoleAccount } from '../support/fixtures';
import { RetentionService } from '../../src/retention/retention.service';

/**
 * Human approval at the delegation boundary (docs/api.md §16), through HTTP on a real
 * server: a held task is the requester's alone until a person of the deciding
 * organization approves it; deny, `always`, the limit, expiry, and the races.
 */
describe('approvals (docs/api.md §16)', () => {
  let t: TestApp;
  let acme: ConsoleAccount;
  let globex: ConsoleAccount;
  let acmeAdmin: string;
  let globexAdmin: string;

  beforeAll(async () => {
    t = await startApp({ RATE_LIMIT_PROTOCOL_PER_MINUTE: '100000', RATE_LIMIT_REST_PER_MINUTE: '100000' });
    acme = await signup(t, 'Acme');
    globex = await signup(t, 'Globex');
    acmeAdmin = await mintAdminKey(t, acme);
    globexAdmin = await mintAdminKey(t, globex);
  });
  afterAll(() => t.close());

  /** A requester of Acme that permits anyone, and a worker of Globex that asks about peers it has no rule for. */
  async function askingPair(): Promise<{ requester: Agent; worker: Agent }> {
    return {
      requester: await enabledAgent(t, acme, { filterMode: 'blacklist' }),
      worker: await enabledAgent(t, globex, { filterMode: 'approval' }),
    };
  }

  /** The worker's inbound `ask` rule about the requester, written by its organization. */
  async function askRule(worker: Agent, requester: Agent): Promise<void> {
    await t
      .http()
      .post('/api/v1/contact-rules')
      .set(bearer(globex))
      .send({
        identity: worker.handle,
        direction: 'inbound',
        action: 'ask',
        peer: { type: 'identity', handle: requester.handle },
      })
      .expect(201);
  }

  /** A blocking send (a held task answers at once: auth-required is an interrupted state). */
  async function send(requester: Agent, worker: Agent, text = 'please do it', blocking = true) {
    const res = await rpc(t, worker.handle, requester.key, 'message/send', {
      message: v03Message(text),
      configuration: { blocking },
    }).expect(200);
    if (!res.body.result) {
      throw new Error(JSON.stringify(res.body));
    }
    return res.body.result as {
      id: string;
      contextId: string;
      status: { state: string; message?: { parts: Array<{ text: string }> } };
      history: unknown[];
    };
  }

  const approvals = (key: string, query = '') => t.http().get(`/api/v1/approvals${query}`).set(apiKey(key));
  const decide = (key: string, id: string, verb: 'approve' | 'deny', body: Record<string, unknown>) =>
    t.http().post(`/api/v1/approvals/${id}/${verb}`).set(apiKey(key)).send(body);
  const task = (key: string, id: string) => t.http().get(`/api/v1/tasks/${id}`).set(apiKey(key));
  const pendingOf = async (worker: Agent) =>
    (await approvals(globexAdmin, `?state=pending&identity=${worker.handle}`).expect(200)).body.approvals as Array<{
      id: string;
      tasks: number;
    }>;
  const eventsAbout = async (taskId: string, organizationId: string) =>
    (await t.db.query(`SELECT type FROM events WHERE organization_id = $1 AND data->'task'->>'id' = $2 ORDER BY seq`, [
      organizationId,
      taskId,
    ])) as Array<{ type: string }>;

  it('a new task is recorded and answered at once in auth-required, saying whose approval it waits for', async () => {
    const { requester, worker } = await askingPair();
    const held = await send(requester, worker, 'draft the invoice');
    expect(held.status.state).toBe('auth-required');
    expect(held.status.message!.parts[0].text).toBe("This task waits for the worker's organization to approve it.");
    expect(held.history).toHaveLength(2);
    // The requester's side sees it as any task of the pair.
    expect((await task(requester.key, held.id).expect(200)).body.status.state).toBe('auth-required');
    const got = await rpc(t, worker.handle, requester.key, 'tasks/get', { id: held.id }).expect(200);
    expect(got.body.result.status.state).toBe('auth-required');
  });

  it('nothing reaches the worker before approval: REST reads, lists, replies, contexts, events, forwards', async () => {
    const { requester, worker } = await askingPair();
    const held = await send(requester, worker);
    for (const key of [worker.key, globexAdmin]) {
      await task(key, held.id).expect(404);
      await t.http().get(`/api/v1/tasks/${held.id}/messages`).set(apiKey(key)).expect(404);
      const listed = await t.http().get('/api/v1/tasks?limit=200').set(apiKey(key)).expect(200);
      expect(listed.body.tasks.map((x: { id: string }) => x.id)).not.toContain(held.id);
      await t.http().get(`/api/v1/contexts/${held.contextId}`).set(apiKey(key)).expect(404);
      const contexts = await t.http().get('/api/v1/contexts?limit=200').set(apiKey(key)).expect(200);
      expect(JSON.stringify(contexts.body)).not.toContain(held.contextId);
      await reply(t, held.id, key, { state: 'working' }).expect(404);
    }
    await t.http().get(`/api/v1/tasks/${held.id}`).set(bearer(globex)).expect(404);
    expect(await eventsAbout(held.id, globex.organizationId)).toEqual([]);
    expect((await eventsAbout(held.id, acme.organizationId)).map((e) => e.type)).toEqual([
      'task.created',
      'task.message',
      'task.status',
    ]);
    const streamed = await t.http().get('/api/v1/events?limit=200').set(apiKey(worker.key)).expect(200);
    expect(JSON.stringify(streamed.body)).not.toContain(held.id);
    expect(await t.db.query(`SELECT 1 FROM upstream_forwards WHERE task_id = $1`, [held.id])).toEqual([]);
    // The requester may not continue it.
    const more = await rpc(t, worker.handle, requester.key, 'message/send', {
      message: v03Message('and another thing', { taskId: held.id }),
    }).expect(200);
    expect(more.body.error).toMatchObject({ code: -32004, message: expect.stringContaining('waits for approval') });
  });

  it("a context shows the worker's side its tasks but the held ones", async () => {
    const { requester, worker } = await askingPair();
    const first = await send(requester, worker, 'first');
    const [request] = await pendingOf(worker);
    await decide(globexAdmin, request.id, 'approve', { remember: 'once' }).expect(200);
    const later = await rpc(t, worker.handle, requester.key, 'message/send', {
      message: v03Message('second', { contextId: first.contextId }),
    }).expect(200);
    expect(later.body.result).toMatchObject({ contextId: first.contextId, status: { state: 'auth-required' } });
    const tasksIn = async (key: string) =>
      (await t.http().get(`/api/v1/contexts/${first.contextId}`).set(apiKey(key)).expect(200)).body.tasks.map(
        (x: { id: string }) => x.id,
      );
    expect(await tasksIn(worker.key)).toEqual([first.id]);
    expect(await tasksIn(globexAdmin)).toEqual([first.id]);
    expect(await tasksIn(requester.key)).toEqual([later.body.result.id, first.id]);
  });

  it('lists the request for the deciding organization only; the tasks of the pair meanwhile join it', async () => {
    const { requester, worker } = await askingPair();
    const first = await send(requester, worker, 'first');
    await send(requester, worker, 'second');
    const page = (await approvals(globexAdmin, `?identity=${worker.handle}`).expect(200)).body;
    expect(page.pending).toBeGreaterThanOrEqual(1);
    expect(page.approvals).toHaveLength(1);
    expect(page.approvals[0]).toMatchObject({
      state: 'pending',
      side: 'worker',
      identity: { handle: worker.handle },
      peer: { handle: requester.handle, organization_id: acme.organizationId },
      requester: { handle: requester.handle, organization_id: acme.organizationId },
      worker: { handle: worker.handle, organization_id: globex.organizationId },
      first_task_id: first.id,
      first_message: { kind: 'message', role: 'user', parts: [{ kind: 'text', text: 'first' }], taskId: first.id },
      tasks: 2,
      remember: null,
      reason: null,
      decided_by: null,
      decided_at: null,
    });
    const { created_at, expires_at } = page.approvals[0];
    expect(Date.parse(expires_at) - Date.parse(created_at)).toBe(72 * 3600_000);
    // `approval.requested` once, when the first task opened it, to the deciding organization only.
    const requested = await t.db.query(
      `SELECT organization_id, data->'approval'->>'first_task_id' AS first FROM events
        WHERE type = 'approval.requested' AND data->'approval'->>'id' = $1`,
      [page.approvals[0].id],
    );
    expect(requested).toEqual([{ organization_id: globex.organizationId, first: first.id }]);
    // The other side never sees it; an agent key may not list or decide.
    const theirs = (await approvals(acmeAdmin).expect(200)).body;
    expect(theirs.approvals.map((a: { id: string }) => a.id)).not.toContain(page.approvals[0].id);
    await approvals(worker.key).expect(403);
    await decide(acmeAdmin, page.approvals[0].id, 'approve', { remember: 'once' }).expect(404);
    await decide(worker.key, page.approvals[0].id, 'approve', { remember: 'once' }).expect(403);
    await decide(globexAdmin, randomUUID(), 'approve', { remember: 'once' }).expect(404);
    await decide(globexAdmin, 'not-an-id', 'approve', { remember: 'once' }).expect(404);
    await decide(globexAdmin, page.approvals[0].id, 'approve', { remember: 'sometimes' }).expect(400);
    await decide(globexAdmin, page.approvals[0].id, 'deny', { remember: 'once', reason: 'x'.repeat(501) }).expect(400);
    await approvals(globexAdmin, '?state=maybe').expect(400);
    // The Console decides too.
    const listed = await t.http().get('/api/v1/approvals?state=pending').set(bearer(globex)).expect(200);
    expect(listed.body.approvals.map((a: { id: string }) => a.id)).toContain(page.approvals[0].id);
  });

  it('approve: the waiting tasks go to the worker as new work (events, REST), and the request is decided once', async () => {
    const { requester, worker } = await askingPair();
    const held = await send(requester, worker, 'approve me');
    const [request] = await pendingOf(worker);
    const approved = await decide(globexAdmin, request.id, 'approve', { remember: 'once' }).expect(200);
    expect(approved.body).toMatchObject({
      id: request.id,
      state: 'approved',
      remember: 'once',
      tasks: 0,
      decided_by: { type: 'key', id: expect.any(String) },
      decided_at: expect.any(String),
    });
    expect((await task(worker.key, held.id).expect(200)).body.status.state).toBe('submitted');
    expect((await eventsAbout(held.id, globex.organizationId)).map((e) => e.type)).toEqual([
      'task.created',
      'task.status',
    ]);
    const [created] = (await t.db.query(
      `SELECT data FROM events WHERE organization_id = $1 AND type = 'task.created' AND data->'task'->>'id' = $2`,
      [globex.organizationId, held.id],
    )) as Array<{ data: { message: { parts: Array<{ text: string }> } } }>;
    expect(created.data.message.parts[0].text).toBe('approve me');
    expect((await eventsAbout(held.id, acme.organizationId)).map((e) => e.type).slice(-1)).toEqual(['task.status']);
    const decided = await t.db.query(
      `SELECT organization_id FROM events WHERE type = 'approval.decided' AND data->'approval'->>'id' = $1`,
      [request.id],
    );
    expect(decided).toEqual([{ organization_id: globex.organizationId }]);
    const audit = await t.http().get('/api/v1/audit-events?action=approval.*').set(bearer(globex)).expect(200);
    expect(audit.body.audit_events[0]).toMatchObject({
      action: 'approval.approved',
      actor: { type: 'api_key' },
      target: { type: 'approval', id: request.id, label: requester.handle },
    });
    // Decided once.
    await decide(globexAdmin, request.id, 'approve', { remember: 'once' }).expect(409);
    await decide(globexAdmin, request.id, 'deny', { remember: 'once' }).expect(409);
    // The worker replies as to any task; the requester sees it.
    await reply(t, held.id, worker.key, {
      state: 'completed',
      message: { parts: [{ kind: 'text', text: 'done' }] },
    }).expect(200);
    expect((await task(requester.key, held.id).expect(200)).body.status.state).toBe('completed');
    // `once`: the next task of the pair waits again.
    expect((await send(requester, worker)).status.state).toBe('auth-required');
  });

  it('deny: the waiting tasks are rejected with the person’s reason; by the Console, named in the audit log', async () => {
    const { requester, worker } = await askingPair();
    const held = await send(requester, worker);
    const [request] = await pendingOf(worker);
    const denied = await t
      .http()
      .post(`/api/v1/approvals/${request.id}/deny`)
      .set(bearer(globex))
      .send({ remember: 'once', reason: 'not this week' })
      .expect(200);
    expect(denied.body).toMatchObject({
      state: 'denied',
      reason: 'not this week',
      decided_by: { type: 'user', id: globex.userId, email: globex.email },
    });
    const rejected = (await task(requester.key, held.id).expect(200)).body;
    expect(rejected.status.state).toBe('rejected');
    expect(rejected.status.message.parts[0].text).toBe(
      "Rejected: the worker's organization declined this task. Reason: not this week",
    );
    await task(worker.key, held.id).expect(404);
    const audit = await t.http().get('/api/v1/audit-events?action=approval.denied').set(bearer(globex)).expect(200);
    expect(audit.body.audit_events[0]).toMatchObject({
      actor: { type: 'console_user', id: globex.userId },
      changes: { state: { before: 'pending', after: 'denied' }, reason: { before: null, after: 'not this week' } },
    });
  });

  it('always: approve writes an allow rule on the deciding side, and the next task is not held', async () => {
    const { requester, worker } = await askingPair();
    await send(requester, worker);
    const [request] = await pendingOf(worker);
    await decide(globexAdmin, request.id, 'approve', { remember: 'always' }).expect(200);
    const rules = (
      await t.http().get(`/api/v1/contact-rules?identity=${worker.handle}`).set(bearer(globex)).expect(200)
    ).body.rules;
    expect(rules).toEqual([
      expect.objectContaining({
        identity: worker.handle,
        direction: 'inbound',
        action: 'allow',
        peer: expect.objectContaining({ type: 'identity', handle: requester.handle }),
      }),
    ]);
    expect((await send(requester, worker, 'not held', false)).status.state).toBe('submitted');
  });

  it('always: deny turns an existing ask rule into a block, and the pair is denied from then on', async () => {
    const requester = await enabledAgent(t, acme, { filterMode: 'blacklist' });
    const worker = await enabledAgent(t, globex);
    await askRule(worker, requester);
    const held = await send(requester, worker);
    const [request] = await pendingOf(worker);
    await decide(globexAdmin, request.id, 'deny', { remember: 'always' }).expect(200);
    expect((await task(requester.key, held.id).expect(200)).body.status.state).toBe('rejected');
    const rules = (
      await t.http().get(`/api/v1/contact-rules?identity=${worker.handle}`).set(bearer(globex)).expect(200)
    ).body.rules;
    expect(rules.map((rule: { action: string; direction: string }) => [rule.direction, rule.action])).toEqual([
      ['inbound', 'block'],
    ]);
    const refused = await rpc(t, worker.handle, requester.key, 'message/send', { message: v03Message('again') });
    expect(refused.status).toBe(403);
  });

  it('both sides ask: the task waits for both requests, and goes to the worker once both approve', async () => {
    const requester = await enabledAgent(t, acme, { filterMode: 'approval' });
    const worker = await enabledAgent(t, globex, { filterMode: 'approval' });
    const held = await send(requester, worker);
    expect(held.status.message!.parts[0].text).toBe(
      "This task waits for your organization and the worker's organization to approve it.",
    );
    const [ours] = (await approvals(acmeAdmin, `?state=pending&identity=${requester.handle}`).expect(200)).body
      .approvals;
    expect(ours).toMatchObject({ side: 'requester', peer: { handle: worker.handle } });
    const [theirs] = await pendingOf(worker);
    await decide(acmeAdmin, ours.id, 'approve', { remember: 'once' }).expect(200);
    await task(worker.key, held.id).expect(404);
    await decide(globexAdmin, theirs.id, 'approve', { remember: 'once' }).expect(200);
    expect((await task(worker.key, held.id).expect(200)).body.status.state).toBe('submitted');
  });

  it('a canceled task leaves its request, which stays pending', async () => {
    const { requester, worker } = await askingPair();
    const first = await send(requester, worker);
    await send(requester, worker);
    const canceled = await rpc(t, worker.handle, requester.key, 'tasks/cancel', { id: first.id }).expect(200);
    expect(canceled.body.result.status.state).toBe('canceled');
    const [request] = await pendingOf(worker);
    expect(request.tasks).toBe(1);
    await decide(globexAdmin, request.id, 'approve', { remember: 'once' }).expect(200);
    await task(worker.key, first.id).expect(404);
    expect(await t.db.query(`SELECT 1 FROM upstream_forwards WHERE task_id = $1`, [first.id])).toEqual([]);
  });

  it('a streaming send that starts a held task stays open through the approval until the task is terminal', async () => {
    const { requester, worker } = await askingPair();
    const stream = await openStream(t.baseUrl, worker.handle, requester.key, 'message/stream', {
      message: v03Message('stream me'),
    });
    const first = await stream.next();
    expect(first!.body.result).toMatchObject({ kind: 'task', status: { state: 'auth-required' } });
    const [request] = await pendingOf(worker);
    await decide(globexAdmin, request.id, 'approve', { remember: 'once' }).expect(200);
    await reply(t, first!.body.result.id, worker.key, { state: 'completed' }).expect(200);
    const rest = await stream.rest();
    expect(rest.map((event) => event.result.status?.state)).toEqual(['submitted', 'completed']);
  });

  it('the check endpoint names the side whose ask rule asks, seen from both organizations', async () => {
    const requester = await enabledAgent(t, acme, { filterMode: 'blacklist' });
    const worker = await enabledAgent(t, globex);
    await askRule(worker, requester);
    for (const account of [acme, globex]) {
      const check = await t
        .http()
        .post('/api/v1/admission/check')
        .set(bearer(account))
        .send({ requester: requester.handle, worker: worker.handle })
        .expect(200);
      expect(check.body).toMatchObject({
        allowed: false,
        reason: 'approval_required_by_worker',
        approval_required_by: ['worker'],
      });
    }
  });

  it("approve queues the forward to the worker's upstream agent, in the decision's transaction", async () => {
    const { requester, worker } = await askingPair();
    await t.db.query(
      `INSERT INTO identity_upstreams (identity_id, url, protocol_version, binding) VALUES ($1, 'https://upstream.example.invalid/a2a', '1.0', 'JSONRPC')`,
      [worker.id],
    );
    const held = await send(requester, worker);
    expect(await t.db.query(`SELECT 1 FROM upstream_forwards WHERE task_id = $1`, [held.id])).toEqual([]);
    const [request] = await pendingOf(worker);
    await decide(globexAdmin, request.id, 'approve', { remember: 'once' }).expect(200);
    expect(await t.db.query(`SELECT kind FROM upstream_forwards WHERE task_id = $1`, [held.id])).toEqual([
      { kind: 'message' },
    ]);
  });

  describe('races', () => {
    it('approve and deny at once: exactly one wins, the other finds it decided', async () => {
      const { requester, worker } = await askingPair();
      const held = await send(requester, worker);
      const [request] = await pendingOf(worker);
      const answers = await Promise.all([
        decide(globexAdmin, request.id, 'approve', { remember: 'once' }),
        t.http().post(`/api/v1/approvals/${request.id}/deny`).set(bearer(globex)).send({ remember: 'once' }),
      ]);
      expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409]);
      const state = (await task(requester.key, held.id).expect(200)).body.status.state;
      expect(state).toBe(answers[0].status === 200 ? 'submitted' : 'rejected');
    });

    it('both sides approve at once: the task goes to the worker, once', async () => {
      const requester = await enabledAgent(t, acme, { filterMode: 'approval' });
      const worker = await enabledAgent(t, globex, { filterMode: 'approval' });
      const held = await send(requester, worker);
      const [ours] = (await approvals(acmeAdmin, `?state=pending&identity=${requester.handle}`).expect(200)).body
        .approvals;
      const [theirs] = await pendingOf(worker);
      await Promise.all([
        decide(acmeAdmin, ours.id, 'approve', { remember: 'once' }).expect(200),
        decide(globexAdmin, theirs.id, 'approve', { remember: 'once' }).expect(200),
      ]);
      expect((await task(worker.key, held.id).expect(200)).body.status.state).toBe('submitted');
      expect((await eventsAbout(held.id, globex.organizationId)).map((e) => e.type)).toEqual([
        'task.created',
        'task.status',
      ]);
    });

    it('approve and cancel at once: the task ends canceled, and reaches the worker only if approved first', async () => {
      const { requester, worker } = await askingPair();
      const held = await send(requester, worker);
      const [request] = await pendingOf(worker);
      const [approved, canceled] = await Promise.all([
        decide(globexAdmin, request.id, 'approve', { remember: 'once' }),
        rpc(t, worker.handle, requester.key, 'tasks/cancel', { id: held.id }),
      ]);
      expect(approved.status).toBe(200);
      expect(canceled.body.result.status.state).toBe('canceled');
      const states = (await t.db.query(`SELECT state FROM task_events WHERE task_id = $1 ORDER BY seq`, [held.id])).map(
        (row: { state: string }) => row.state,
      );
      expect(states.at(-1)).toBe('canceled');
      const seen = await task(worker.key, held.id);
      expect(seen.status).toBe(states.includes('submitted', 1) ? 200 : 404);
    });

    it('a request past its time is expired to a decision, then swept: its tasks rejected, "approval expired"', async () => {
      const { requester, worker } = await askingPair();
      const held = await send(requester, worker);
      const [request] = await pendingOf(worker);
      await t.db.query(`UPDATE approvals SET expires_at = now() - interval '1 minute' WHERE id = $1`, [request.id]);
      await decide(globexAdmin, request.id, 'approve', { remember: 'once' }).expect(409);
      // The retention pass runs the expiry (where a dispatcher runs: here, and in `npm run worker`).
      const [pass] = await Promise.all([
        t.app.get(RetentionService).runOnce(),
        decide(globexAdmin, request.id, 'approve', { remember: 'once' }).expect(409),
      ]);
      expect(pass.approvals_expired).toBeGreaterThanOrEqual(1);
      const rejected = (await task(requester.key, held.id).expect(200)).body;
      expect(rejected.status).toMatchObject({ state: 'rejected' });
      expect(rejected.status.message.parts[0].text).toContain('approval expired');
      const [after] = (await approvals(globexAdmin, `?identity=${worker.handle}`).expect(200)).body.approvals;
      expect(after).toMatchObject({
        id: request.id,
        state: 'expired',
        decided_by: null,
        decided_at: expect.any(String),
      });
      expect(
        await t.db.query(`SELECT 1 FROM events WHERE type = 'approval.decided' AND data->'approval'->>'id' = $1`, [
          request.id,
        ]),
      ).toHaveLength(1);
    });
  });
});

describe('approvals: APPROVAL_MAX_PENDING and APPROVAL_TTL_HOURS', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startApp({ APPROVAL_MAX_PENDING: '1', APPROVAL_TTL_HOURS: '2' });
  });
  afterAll(() => t.close());

  it('a task that would open one request too many is rejected, saying why; joining a pending one still works', async () => {
    const acme = await signup(t, 'Acme');
    const globex = await signup(t, 'Globex');
    const requester = await enabledAgent(t, acme, { filterMode: 'blacklist' });
    const [one, two] = [
      await enabledAgent(t, globex, { filterMode: 'approval' }),
      await enabledAgent(t, globex, { filterMode: 'approval' }),
    ];
    const sendTo = async (worker: Agent) =>
      (
        await rpc(t, worker.handle, requester.key, 'message/send', {
          message: v03Message('hello'),
          configuration: { blocking: false },
        }).expect(200)
      ).body.result;
    expect((await sendTo(one)).status.state).toBe('auth-required');
    expect((await sendTo(one)).status.state).toBe('auth-required');
    const refused = await sendTo(two);
    expect(refused.status.state).toBe('rejected');
    expect(refused.status.message.parts[0].text).toContain("the worker's organization has too many approval requests");
    const requests = await t.db.query(`SELECT count(*)::int AS n FROM approvals`);
    expect(requests).toEqual([{ n: 1 }]);
    expect(await t.db.query(`SELECT 1 FROM approval_tasks WHERE task_id = $1`, [refused.id])).toEqual([]);
    // The limit is per organization: another organization's worker still opens its own.
    const initech = await signup(t, 'Initech');
    expect((await sendTo(await enabledAgent(t, initech, { filterMode: 'approval' }))).status.state).toBe(
      'auth-required',
    );
  });

  it('a request expires APPROVAL_TTL_HOURS after it was opened', async () => {
    const requester = await enabledAgent(t, await signup(t), { filterMode: 'blacklist' });
    const umbrella = await signup(t, 'Umbrella');
    const worker = await enabledAgent(t, umbrella, { filterMode: 'approval' });
    await rpc(t, worker.handle, requester.key, 'message/send', {
      message: v03Message('hello'),
      configuration: { blocking: false },
    }).expect(200);
    const [request] = (
      await t
        .http()
        .get('/api/v1/approvals?state=pending')
        .set(apiKey(await mintAdminKey(t, umbrella)))
        .expect(200)
    ).body.approvals;
    expect(Date.parse(request.expires_at) - Date.parse(request.created_at)).toBe(2 * 3600_000);
  });
});
