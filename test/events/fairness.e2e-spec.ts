import { startApp, type TestApp } from '../support/app';
import { bearer, signup } from '../support/fixtures';
import { startReceiver, subscribe, type Receiver } from '../support/receiver';

/**
 * One tenant cannot stall every tenant's webhooks: a slow or dead endpoint holds at
 * most a bounded share of a dispatcher's slots (per webhook and per organization),
 * and the ping endpoint has a quota of its own.
 */
describe('delivery fairness', () => {
  describe('with a never-answering endpoint saturated', () => {
    const BATCH = 50;
    const SHARE = 25; // EVENTS_MAX_SHARE_PERCENT 50 of 50 slots
    let t: TestApp;
    let hanging: Receiver;
    let healthy: Receiver;

    beforeAll(async () => {
      t = await startApp({
        WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true',
        EVENTS_BATCH_SIZE: String(BATCH),
        // The hanging sends stay in flight for the whole test.
        WEBHOOK_TIMEOUT_MS: '60000',
      });
      hanging = await startReceiver(() => 'hang');
      healthy = await startReceiver(() => 200);
    });
    afterAll(async () => {
      // Closing the receiver ends the hanging sends, so the dispatcher stops at once.
      await hanging.close();
      await t.close();
      await healthy.close();
    });

    it("200 pings to it hold at most its share of the slots; another organization's delivery still arrives within 2 s", async () => {
      const noisy = await signup(t, 'Noisy');
      const quiet = await signup(t, 'Quiet');
      const dead = await subscribe(t, hanging, bearer(noisy), { events: ['*'] });
      const alive = await subscribe(t, healthy, bearer(quiet), { events: ['*'] });

      for (let i = 0; i < 200; i++) {
        await t.http().post(`/api/v1/webhooks/${dead.id}/test`).set(bearer(noisy)).expect(202);
      }
      // The dead endpoint has taken all it may: its share, no more.
      await hanging.waitFor((received) => received.length >= SHARE);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(hanging.received).toHaveLength(SHARE);

      await t.http().post(`/api/v1/webhooks/${alive.id}/test`).set(bearer(quiet)).expect(202);
      // The bound: within 2 s (before the fix: 58 s behind the dead endpoint's backlog).
      await healthy.waitFor((received) => received.length >= 1, 2_000);
      expect(alive.requests()).toHaveLength(1);
      expect(hanging.received).toHaveLength(SHARE);
    });

    it('a failing webhook (its last attempt failed) holds at most a tenth of the slots', async () => {
      const failing = await signup(t, 'Failing');
      const dead = await subscribe(t, hanging, bearer(failing), { events: ['*'] });
      await t.db.query(`UPDATE webhooks SET failing_since = now() WHERE id = $1`, [dead.id]);
      for (let i = 0; i < 20; i++) {
        await t.http().post(`/api/v1/webhooks/${dead.id}/test`).set(bearer(failing)).expect(202);
      }
      await hanging.waitFor(() => dead.requests().length >= BATCH / 10);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(dead.requests()).toHaveLength(BATCH / 10);
    });
  });

  it('the ping endpoint has its own quota per organization (RATE_LIMIT_WEBHOOK_TESTS_PER_MINUTE)', async () => {
    const t = await startApp({
      RATE_LIMIT_WEBHOOK_TESTS_PER_MINUTE: '3',
      WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true',
      EVENTS_DISPATCHER: 'off',
    });
    try {
      const org = await signup(t);
      const other = await signup(t);
      const create = async (account: typeof org) =>
        (
          await t
            .http()
            .post('/api/v1/webhooks')
            .set(bearer(account))
            .send({ url: 'http://127.0.0.1:9/hook', events: ['*'] })
            .expect(201)
        ).body.id as string;
      const [first, second] = [await create(org), await create(org)];
      await t.http().post(`/api/v1/webhooks/${first}/test`).set(bearer(org)).expect(202);
      await t.http().post(`/api/v1/webhooks/${second}/test`).set(bearer(org)).expect(202);
      await t.http().post(`/api/v1/webhooks/${first}/test`).set(bearer(org)).expect(202);
      // Per organization, whichever of its webhooks.
      const limited = await t.http().post(`/api/v1/webhooks/${second}/test`).set(bearer(org)).expect(429);
      expect(limited.body.code).toBe('rate_limited');
      expect(limited.headers['ratelimit-policy']).toBe('"webhook_tests";q=3;w=60');
      // Another organization has its own.
      await t
        .http()
        .post(`/api/v1/webhooks/${await create(other)}/test`)
        .set(bearer(other))
        .expect(202);
      // Other webhook routes are not affected.
      await t.http().get(`/api/v1/webhooks/${first}`).set(bearer(org)).expect(200);
    } finally {
      await t.close();
    }
  });
});
