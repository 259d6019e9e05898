import { enabledAgent, reply, submitTask, type Agent } from '../support/a2a';
import { startApp, type TestApp } from '../support/app';
import { eventually } from '../support/eventually';
import { bearer, signup, type ConsoleAccount } from '../support/fixtures';
import { freePort } from '../support/server-process';
import { startUpstreamAgent } from '../support/upstream-agent';

/** Availability in the directory (docs/api.md §4, "Availability"). */
describe('availability', () => {
  let t: TestApp;
  let acme: ConsoleAccount;

  beforeAll(async () => {
    t = await startApp({
      WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true',
      EVENTS_POLL_INTERVAL_MS: '50',
      UPSTREAM_RETRY_SCHEDULE_MS: '20,20,20',
      DIRECTORY_UNAVAILABLE_AFTER_FAILED_FORWARDS: '2',
      DIRECTORY_UNAVAILABLE_AFTER_UNANSWERED_S: '1',
    });
    acme = await signup(t, 'Availability Org');
  });
  afterAll(() => t.close());

  async function listed(): Promise<Agent> {
    const agent = await enabledAgent(t, acme);
    await t
      .http()
      .patch(`/api/v1/identities/${agent.handle}/settings`)
      .set(bearer(acme))
      .send({ publicly_discoverable: true })
      .expect(200);
    return agent;
  }

  const entry = async (agent: Agent, query: Record<string, string> = {}) =>
    (
      (await t.http().get('/a2a/directory').query(query).expect(200)).body.agents as Array<{
        agent_handle: string;
        availability: string;
      }>
    ).find((a) => a.agent_handle === agent.handle);

  it('a worker with a task unanswered too long is unavailable until it answers; available=true leaves it out', async () => {
    const requester = await enabledAgent(t, acme);
    const worker = await listed();
    expect((await entry(worker))?.availability).toBe('available');
    const task = await submitTask(t, requester, worker);
    await eventually(
      () => entry(worker),
      (e) => e?.availability === 'unavailable',
    );
    expect(await entry(worker, { available: 'true' })).toBeUndefined();
    expect((await entry(worker, { available: 'false' }))?.availability).toBe('unavailable');
    const org = await t
      .http()
      .get('/api/v1/identities/a2a/directory')
      .query({ available: 'false' })
      .set(bearer(acme))
      .expect(200);
    expect(org.body.identities.map((i: { agent_handle: string }) => i.agent_handle)).toContain(worker.handle);

    await reply(t, task.id, worker.key, { state: 'working' }).expect(200);
    expect((await entry(worker, { available: 'true' }))?.availability).toBe('available');
    expect((await t.http().get('/a2a/directory').query({ available: 'maybe' })).status).toBe(400);
  });

  it('an upstream whose last forward attempts failed is unavailable, until one succeeds', async () => {
    // A port nobody listens on: every attempt fails.
    const closed = await freePort();
    const requester = await enabledAgent(t, acme);
    const bridged = await listed();
    const bridge = (url: string) =>
      t
        .http()
        .put(`/api/v1/identities/${bridged.handle}/upstream`)
        .set(bearer(acme))
        .send({ url, protocol_version: '1.0', binding: 'JSONRPC' })
        .expect(200);
    const ended = (taskId: string, state: string) =>
      eventually(
        async () => (await t.db.query(`SELECT state FROM tasks WHERE id = $1`, [taskId]))[0] as { state: string },
        (row) => row.state === state,
      );
    const failedForwards = async () =>
      (
        (await t.db.query(
          `SELECT failed_forwards FROM identity_upstreams u JOIN identities i ON i.id = u.identity_id WHERE i.agent_handle = $1`,
          [bridged.handle],
        )) as Array<{ failed_forwards: number }>
      )[0].failed_forwards;
    await bridge(`http://127.0.0.1:${closed}/a2a`);
    // The retries run out and the task fails: no task waits unanswered, the failed attempts decide.
    await ended((await submitTask(t, requester, bridged)).id, 'failed');
    expect(await failedForwards()).toBe(4);
    expect((await entry(bridged))?.availability).toBe('unavailable');
    expect(await entry(bridged, { available: 'true', q: bridged.handle })).toBeUndefined();

    // An attempt that succeeds makes it available again (docs/api.md §4).
    const upstream = await startUpstreamAgent(await freePort());
    try {
      await bridge(upstream.url);
      await ended((await submitTask(t, requester, bridged)).id, 'completed');
      // The attempt is counted as the forward ends, just after the answer that completed the task.
      expect(await eventually(failedForwards, (n) => n === 0)).toBe(0);
      expect((await entry(bridged))?.availability).toBe('available');
    } finally {
      await upstream.close();
    }
  });
});
