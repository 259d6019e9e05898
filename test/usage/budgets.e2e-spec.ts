import { randomUUID } from 'node:crypto';
import { SendMessageRequest } from '@a2a-js/sdk';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { startApp, type TestApp } from '../support/app';
import { agentPair, enabledAgent, rpc, v03Message, v1Message, type Agent } from '../support/a2a';
import { eventually } from '../support/eventually';
import { apiKey, bearer, mintAdminKey, signup, type ConsoleAccount } from '../support/fixtures';
import { grpcClient, metadataOf, unary } from '../support/grpc';

/**
 * Budgets (docs/api.md §18): an identity's daily task quota and monthly cost budget as
 * settings, a send over quota refused on every binding with `quota_exceeded` and when
 * it resets, exactly one of two concurrent sends at the limit refused, and
 * `usage.threshold` at 80% and 100%.
 */
describe('budgets', () => {
  let t: TestApp;
  let acme: ConsoleAccount;
  let admin: string;

  beforeAll(async () => {
    t = await startApp({ GRPC_PORT: '0', GRPC_HOST: '127.0.0.1' });
    acme = await signup(t, 'Acme');
    admin = await mintAdminKey(t, acme);
  });
  afterAll(() => t.close());

  const settings = (agent: Agent, body: Record<string, unknown>, key = admin) =>
    t.http().patch(`/api/v1/identities/${agent.handle}/settings`).set(apiKey(key)).send(body);

  /** A non-blocking send that starts a task: the response as it came. */
  const send = (requester: Agent, worker: Agent) =>
    rpc(t, worker.handle, requester.key, 'message/send', {
      message: v03Message('count me'),
      configuration: { blocking: false },
    });

  const nextUtcMidnight = () => {
    const now = new Date();
    return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1)).toISOString();
  };

  it('are settings: admin key or Console sets and clears them, the identity reads them, its own key cannot set them', async () => {
    const { requester } = await agentPair(t, acme);
    const set = await settings(requester, {
      daily_task_quota: 250,
      monthly_cost_budget: { amount: '120.50', currency: 'EUR' },
    }).expect(200);
    expect(set.body).toMatchObject({
      daily_task_quota: 250,
      monthly_cost_budget: { amount: '120.5', currency: 'EUR' },
    });
    const read = await t
      .http()
      .get(`/api/v1/identities/${requester.handle}/settings`)
      .set(apiKey(requester.key))
      .expect(200);
    expect(read.body).toMatchObject({
      daily_task_quota: 250,
      monthly_cost_budget: { amount: '120.5', currency: 'EUR' },
    });
    const refused = await settings(requester, { daily_task_quota: 1000 }, requester.key).expect(403);
    expect(refused.body.code).toBe('setting_not_permitted');
    await t
      .http()
      .patch(`/api/v1/identities/${requester.handle}/settings`)
      .set(bearer(acme))
      .send({ daily_task_quota: null, monthly_cost_budget: null })
      .expect(200)
      .expect(({ body }) => expect(body).toMatchObject({ daily_task_quota: null, monthly_cost_budget: null }));
  });

  it.each([
    [{ daily_task_quota: 0 }],
    [{ daily_task_quota: -3 }],
    [{ daily_task_quota: 2.5 }],
    [{ daily_task_quota: '10' }],
    [{ monthly_cost_budget: { amount: 'ten', currency: 'USD' } }],
    [{ monthly_cost_budget: { amount: '10', currency: 'usd' } }],
    [{ monthly_cost_budget: { amount: '0', currency: 'USD' } }],
    [{ monthly_cost_budget: { amount: '10' } }],
    [{ monthly_cost_budget: '10 USD' }],
  ])('a bad budget is a 400 naming the field: %j', async (body) => {
    const { requester } = await agentPair(t, acme);
    const res = await settings(requester, body).expect(400);
    expect(res.body.code).toBe('validation_failed');
  });

  it('a send over the daily quota is refused on every binding with quota_exceeded and the reset time; nothing is recorded', async () => {
    const { requester, worker } = await agentPair(t, acme);
    await settings(requester, { daily_task_quota: 2 }).expect(200);
    await send(requester, worker).expect(200);
    await send(requester, worker).expect(200);

    const jsonRpc = await send(requester, worker).expect(429);
    expect(jsonRpc.headers['retry-after']).toMatch(/^\d+$/);
    expect(jsonRpc.body.error).toMatchObject({
      code: -32000,
      data: { reason: 'quota_exceeded', status: 429, resets_at: nextUtcMidnight() },
    });
    expect(jsonRpc.body.error.message).toMatch(/daily task quota of 2 reached; it resets at/);

    const rest = await t
      .http()
      .post(`/a2a/${worker.handle}/rest/message:send`)
      .set({ ...apiKey(requester.key), 'A2A-Version': '1.0' })
      .send({ message: v1Message('over') })
      .expect(429);
    expect(rest.body).toMatchObject({
      code: 'quota_exceeded',
      resets_at: nextUtcMidnight(),
      error: { code: 429, status: 'RESOURCE_EXHAUSTED' },
    });

    const grpc = await unary(
      grpcClient(t),
      'sendMessage',
      SendMessageRequest.fromJSON({
        tenant: worker.handle,
        message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'over' }] },
      }),
      metadataOf(apiKey(requester.key)),
    );
    expect({ code: grpc.code, reason: grpc.reason }).toEqual({
      code: GrpcStatus.RESOURCE_EXHAUSTED,
      reason: 'quota_exceeded',
    });

    const tasks = await t.http().get(`/api/v1/tasks?identity=${requester.handle}`).set(apiKey(admin)).expect(200);
    expect(tasks.body.tasks).toHaveLength(2);
    // Another requester of the same organization is not affected; a continued task is not a new one.
    const other = await enabledAgent(t, acme);
    await send(other, worker).expect(200);
  });

  it('two sends at the limit at once: exactly one is refused (and a burst past it keeps exactly the quota)', async () => {
    for (let round = 0; round < 3; round++) {
      const { requester, worker } = await agentPair(t, acme);
      await settings(requester, { daily_task_quota: 3 }).expect(200);
      await send(requester, worker).expect(200);
      await send(requester, worker).expect(200);
      const statuses = (await Promise.all([send(requester, worker), send(requester, worker)])).map((r) => r.status);
      expect(statuses.sort()).toEqual([200, 429]);
    }
    const { requester, worker } = await agentPair(t, acme);
    await settings(requester, { daily_task_quota: 5 }).expect(200);
    const burst = await Promise.all(Array.from({ length: 12 }, () => send(requester, worker)));
    expect(burst.filter((r) => r.status === 200)).toHaveLength(5);
    expect(burst.filter((r) => r.status === 429)).toHaveLength(7);
  });

  it('usage.threshold at 80% and at 100% of the quota, once each', async () => {
    const { requester, worker } = await agentPair(t, acme);
    await settings(requester, { daily_task_quota: 5 }).expect(200);
    const thresholds = async () => {
      const res = await t.http().get('/api/v1/events?limit=200').set(apiKey(admin)).expect(200);
      return (res.body.events as Array<{ type: string; data: Record<string, unknown> }>).filter(
        (event) =>
          event.type === 'usage.threshold' &&
          (event.data.identity as { agent_handle: string }).agent_handle === requester.handle,
      );
    };
    for (let i = 0; i < 3; i++) {
      await send(requester, worker).expect(200);
    }
    await send(requester, worker).expect(200);
    const at80 = await eventually(thresholds, (events) => events.length === 1);
    expect(at80[0].data).toMatchObject({
      budget: 'daily_task_quota',
      threshold: 80,
      used: 4,
      limit: 5,
      resets_at: nextUtcMidnight(),
    });
    await send(requester, worker).expect(200);
    await send(requester, worker).expect(429);
    const both = await eventually(thresholds, (events) => events.length === 2);
    expect(both.map((event) => event.data.threshold).sort()).toEqual([100, 80]);
  });
});
