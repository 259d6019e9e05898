import { startApp, type TestApp } from '../support/app';
import {
  apiKey,
  bearer,
  insertIdentity,
  mintAdminKey,
  mintAgentKey,
  mintKeyDirectly,
  signup,
  type ConsoleAccount,
  type IdentityFixture,
} from '../support/fixtures';

const URL = 'https://hooks.example.invalid/a2a';

describe('webhook subscriptions', () => {
  let t: TestApp;
  let acme: ConsoleAccount;
  let other: ConsoleAccount;
  let billing: IdentityFixture;
  let support: IdentityFixture;
  let admin: string;
  let billingKey: string;

  beforeAll(async () => {
    // The dispatcher is off: these tests are about the subscriptions, not about sending.
    t = await startApp({ EVENTS_DISPATCHER: 'off' });
    acme = await signup(t, 'Acme');
    other = await signup(t, 'Other');
    billing = await insertIdentity(t, { organizationId: acme.organizationId, enabled: true });
    support = await insertIdentity(t, { organizationId: acme.organizationId, enabled: true });
    admin = await mintAdminKey(t, acme);
    billingKey = await mintAgentKey(t, acme, billing.id);
  });
  afterAll(() => t.close());

  const create = (headers: Record<string, string>, body: object) =>
    t.http().post('/api/v1/webhooks').set(headers).send(body);

  describe('create', () => {
    it('returns the subscription with its whsec_ secret, once', async () => {
      const res = await create(bearer(acme), {
        url: URL,
        events: ['task.created', 'task.status'],
        description: 'ops',
      }).expect(201);
      expect(res.body).toEqual({
        id: expect.any(String),
        organization_id: acme.organizationId,
        identity: null,
        url: URL,
        events: ['task.created', 'task.status'],
        description: 'ops',
        status: 'active',
        failing_since: null,
        previous_secret_expires_at: null,
        created_at: expect.any(String),
        updated_at: expect.any(String),
        secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
      });
      const secret: string = res.body.secret;
      const reads = [
        await t.http().get(`/api/v1/webhooks/${res.body.id}`).set(bearer(acme)).expect(200),
        await t.http().get('/api/v1/webhooks').set(apiKey(admin)).expect(200),
        await t
          .http()
          .patch(`/api/v1/webhooks/${res.body.id}`)
          .set(bearer(acme))
          .send({ description: 'ops 2' })
          .expect(200),
      ];
      for (const read of reads) {
        expect(JSON.stringify(read.body)).not.toContain(secret.slice(6));
        expect(JSON.stringify(read.body)).not.toContain('secret"');
      }
    });

    it('["*"] subscribes to everything; repeats are dropped', async () => {
      const all = await create(apiKey(admin), { url: URL, events: ['task.created', '*'] }).expect(201);
      expect(all.body.events).toEqual(['*']);
      const repeated = await create(apiKey(admin), { url: URL, events: ['task.created', 'task.created'] }).expect(201);
      expect(repeated.body.events).toEqual(['task.created']);
    });

    it.each([
      ['an unknown event type', { url: URL, events: ['task.exploded'] }, 'events'],
      ['no event type', { url: URL, events: [] }, 'events'],
      ['events not a list', { url: URL, events: '*' }, 'events'],
      ['no URL', { events: ['*'] }, 'url'],
      ['an unknown field', { url: URL, events: ['*'], secret: 'whsec_mine' }, 'secret'],
    ])('refuses %s (400)', async (_, body, field) => {
      const res = await create(bearer(acme), body).expect(400);
      expect(res.body.code).toBe('validation_failed');
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    });

    it.each([
      ['http', 'http://hooks.example.invalid/a2a'],
      ['credentials in the URL', 'https://user:password@hooks.example.invalid/a2a'],
      ['a relative URL', '/a2a'],
      ['a loopback address', 'https://127.0.0.1/a2a'],
    ])('refuses %s with invalid_webhook_url', async (_, url) => {
      const res = await create(bearer(acme), { url, events: ['*'] }).expect(400);
      expect(res.body).toMatchObject({
        code: 'invalid_webhook_url',
        errors: [{ field: 'url', message: expect.any(String) }],
      });
    });

    it('scopes a subscription to one identity of the organization, by handle or id', async () => {
      const byHandle = await create(bearer(acme), { url: URL, events: ['*'], identity: billing.handle }).expect(201);
      expect(byHandle.body.identity).toBe(billing.handle);
      const byId = await create(apiKey(admin), { url: URL, events: ['task.created'], identity: support.id }).expect(
        201,
      );
      expect(byId.body.identity).toBe(support.handle);
    });

    it('refuses an identity of another organization, or none at all (404)', async () => {
      const foreign = await insertIdentity(t, { organizationId: other.organizationId });
      for (const identity of [foreign.handle, foreign.id, 'no-such-agent']) {
        const res = await create(bearer(acme), { url: URL, events: ['*'], identity }).expect(404);
        expect(res.body.code).toBe('identity_not_found');
      }
    });

    it('refuses organization-only event types on an identity-scoped subscription', async () => {
      const res = await create(bearer(acme), {
        url: URL,
        events: ['api_key.created', 'task.created'],
        identity: billing.handle,
      }).expect(400);
      expect(res.body.errors).toEqual([{ field: 'events', message: expect.stringContaining('api_key.created') }]);
    });
  });

  describe('an agent key', () => {
    let orgWide: string;
    let supportHook: string;

    beforeAll(async () => {
      orgWide = (await create(bearer(acme), { url: URL, events: ['*'] }).expect(201)).body.id;
      supportHook = (await create(bearer(acme), { url: URL, events: ['*'], identity: support.handle }).expect(201)).body
        .id;
    });

    it('subscribes for its own identity, named or not', async () => {
      const implicit = await create(apiKey(billingKey), { url: URL, events: ['task.created'] }).expect(201);
      expect(implicit.body.identity).toBe(billing.handle);
      const named = await create(apiKey(billingKey), { url: URL, events: ['*'], identity: billing.handle }).expect(201);
      expect(named.body.identity).toBe(billing.handle);
    });

    it('cannot subscribe for another identity (403)', async () => {
      const res = await create(apiKey(billingKey), { url: URL, events: ['*'], identity: support.handle }).expect(403);
      expect(res.body.code).toBe('own_identity_only');
    });

    it("lists only its own identity's webhooks, also when filtering for another", async () => {
      const res = await t.http().get('/api/v1/webhooks?limit=200').set(apiKey(billingKey)).expect(200);
      expect(res.body.webhooks.length).toBeGreaterThan(0);
      expect(res.body.webhooks.every((w: { identity: string }) => w.identity === billing.handle)).toBe(true);
      const filtered = await t
        .http()
        .get(`/api/v1/webhooks?identity=${support.handle}`)
        .set(apiKey(billingKey))
        .expect(200);
      expect(filtered.body.webhooks).toEqual([]);
    });

    it("never sees an organization-wide webhook or another identity's (404 everywhere)", async () => {
      for (const id of [orgWide, supportHook]) {
        const requests = [
          t.http().get(`/api/v1/webhooks/${id}`),
          t.http().patch(`/api/v1/webhooks/${id}`).send({ description: 'mine now' }),
          t.http().delete(`/api/v1/webhooks/${id}`),
          t.http().post(`/api/v1/webhooks/${id}/rotate-secret`),
          t.http().post(`/api/v1/webhooks/${id}/test`),
          t.http().get(`/api/v1/webhooks/${id}/deliveries`),
        ];
        for (const request of requests) {
          const res = await request.set(apiKey(billingKey)).expect(404);
          expect(res.body.code).toBe('webhook_not_found');
        }
      }
      await t.http().get(`/api/v1/webhooks/${orgWide}`).set(bearer(acme)).expect(200);
    });

    it("an unclaimed identity's key is refused (403)", async () => {
      const unclaimed = await insertIdentity(t, { organizationId: null });
      const key = await mintKeyDirectly(t, unclaimed.id);
      const res = await create(apiKey(key), { url: URL, events: ['*'] }).expect(403);
      expect(res.body.code).toBe('identity_unclaimed');
    });
  });

  describe('another organization', () => {
    it("gets 404 for every operation on acme's webhook", async () => {
      const id = (await create(bearer(acme), { url: URL, events: ['*'] }).expect(201)).body.id;
      const otherAdmin = await mintAdminKey(t, other);
      for (const headers of [bearer(other), apiKey(otherAdmin)]) {
        await t.http().get(`/api/v1/webhooks/${id}`).set(headers).expect(404);
        await t.http().delete(`/api/v1/webhooks/${id}`).set(headers).expect(404);
        await t.http().get(`/api/v1/webhooks/${id}/deliveries`).set(headers).expect(404);
        const list = await t.http().get('/api/v1/webhooks').set(headers).expect(200);
        expect(list.body.webhooks.map((w: { id: string }) => w.id)).not.toContain(id);
      }
    });
  });

  describe('update and delete', () => {
    it('changes URL, filter and description; the identity cannot change', async () => {
      const id = (await create(bearer(acme), { url: URL, events: ['*'], identity: billing.handle }).expect(201)).body
        .id;
      const res = await t
        .http()
        .patch(`/api/v1/webhooks/${id}`)
        .set(apiKey(billingKey))
        .send({ url: 'https://other.example.invalid/hook', events: ['task.status'], description: 'status only' })
        .expect(200);
      expect(res.body).toMatchObject({
        url: 'https://other.example.invalid/hook',
        events: ['task.status'],
        description: 'status only',
        identity: billing.handle,
      });
      const moved = await t
        .http()
        .patch(`/api/v1/webhooks/${id}`)
        .set(bearer(acme))
        .send({ identity: support.handle })
        .expect(400);
      expect(moved.body.errors).toEqual([{ field: 'identity', message: 'identity is not a known field' }]);
      await t
        .http()
        .patch(`/api/v1/webhooks/${id}`)
        .set(bearer(acme))
        .send({ url: 'http://plain.example.invalid/' })
        .expect(400);
      await t
        .http()
        .patch(`/api/v1/webhooks/${id}`)
        .set(bearer(acme))
        .send({ events: ['api_key.revoked'] })
        .expect(400);
      await t.http().patch(`/api/v1/webhooks/${id}`).set(bearer(acme)).send({ status: 'paused' }).expect(400);
    });

    it('disabling fails the deliveries waiting for it; enabling again clears the failing run', async () => {
      const id = (await create(bearer(acme), { url: URL, events: ['*'] }).expect(201)).body.id;
      const ping = await t.http().post(`/api/v1/webhooks/${id}/test`).set(bearer(acme)).expect(202);
      expect(ping.body).toMatchObject({ event_type: 'ping', status: 'pending', attempt_count: 0 });
      await t.db.query(`UPDATE webhooks SET failing_since = now() - interval '1 day' WHERE id = $1`, [id]);

      const disabled = await t
        .http()
        .patch(`/api/v1/webhooks/${id}`)
        .set(bearer(acme))
        .send({ status: 'disabled' })
        .expect(200);
      expect(disabled.body.status).toBe('disabled');
      const deliveries = await t.http().get(`/api/v1/webhooks/${id}/deliveries`).set(bearer(acme)).expect(200);
      expect(deliveries.body.deliveries).toEqual([
        expect.objectContaining({ id: ping.body.id, status: 'failed', next_attempt_at: null }),
      ]);
      const test = await t.http().post(`/api/v1/webhooks/${id}/test`).set(bearer(acme)).expect(409);
      expect(test.body.code).toBe('webhook_disabled');
      await t.http().post(`/api/v1/webhooks/${id}/deliveries/${ping.body.id}/retry`).set(bearer(acme)).expect(409);

      const enabled = await t
        .http()
        .patch(`/api/v1/webhooks/${id}`)
        .set(bearer(acme))
        .send({ status: 'active' })
        .expect(200);
      expect(enabled.body).toMatchObject({ status: 'active', failing_since: null });
      const retried = await t
        .http()
        .post(`/api/v1/webhooks/${id}/deliveries/${ping.body.id}/retry`)
        .set(bearer(acme))
        .expect(202);
      expect(retried.body).toMatchObject({ id: ping.body.id, status: 'pending', next_attempt_at: expect.any(String) });
    });

    it('deletes a webhook with its deliveries; it is gone afterwards', async () => {
      const id = (await create(apiKey(billingKey), { url: URL, events: ['*'] }).expect(201)).body.id;
      await t.http().post(`/api/v1/webhooks/${id}/test`).set(apiKey(billingKey)).expect(202);
      await t.http().delete(`/api/v1/webhooks/${id}`).set(apiKey(billingKey)).expect(204);
      await t.http().get(`/api/v1/webhooks/${id}`).set(bearer(acme)).expect(404);
      const [{ count }] = await t.db.query(`SELECT count(*)::int AS count FROM deliveries WHERE webhook_id = $1`, [id]);
      expect(count).toBe(0);
    });

    it('a delivery being attempted cannot be retried (409), and the retry changes nothing', async () => {
      const id = (await create(bearer(acme), { url: URL, events: ['*'] }).expect(201)).body.id;
      const ping = await t.http().post(`/api/v1/webhooks/${id}/test`).set(bearer(acme)).expect(202);
      await t.db.query(`UPDATE deliveries SET in_flight = true WHERE id = $1`, [ping.body.id]);
      const [before] = await t.db.query(`SELECT status, attempts, next_attempt_at FROM deliveries WHERE id = $1`, [
        ping.body.id,
      ]);
      const res = await t
        .http()
        .post(`/api/v1/webhooks/${id}/deliveries/${ping.body.id}/retry`)
        .set(bearer(acme))
        .expect(409);
      expect(res.body.code).toBe('delivery_in_flight');
      const [after] = await t.db.query(`SELECT status, attempts, next_attempt_at FROM deliveries WHERE id = $1`, [
        ping.body.id,
      ]);
      expect(after).toEqual(before);
    });

    it('a retry names a delivery of that webhook', async () => {
      const a = (await create(bearer(acme), { url: URL, events: ['*'] }).expect(201)).body.id;
      const b = (await create(bearer(acme), { url: URL, events: ['*'] }).expect(201)).body.id;
      const ping = await t.http().post(`/api/v1/webhooks/${a}/test`).set(bearer(acme)).expect(202);
      const res = await t
        .http()
        .post(`/api/v1/webhooks/${b}/deliveries/${ping.body.id}/retry`)
        .set(bearer(acme))
        .expect(404);
      expect(res.body.code).toBe('delivery_not_found');
      await t.http().post(`/api/v1/webhooks/${a}/deliveries/not-an-id/retry`).set(bearer(acme)).expect(404);
    });
  });

  describe('rotate secret', () => {
    it('returns a new secret once and keeps the old one signing for 24 hours', async () => {
      const created = await create(bearer(acme), { url: URL, events: ['*'] }).expect(201);
      const before = Date.now();
      const rotated = await t
        .http()
        .post(`/api/v1/webhooks/${created.body.id}/rotate-secret`)
        .set(bearer(acme))
        .expect(200);
      expect(rotated.body.secret).toMatch(/^whsec_/);
      expect(rotated.body.secret).not.toBe(created.body.secret);
      const expires = Date.parse(rotated.body.previous_secret_expires_at);
      expect(expires).toBeGreaterThanOrEqual(before + 24 * 3600_000 - 1000);
      expect(expires).toBeLessThanOrEqual(Date.now() + 24 * 3600_000 + 1000);
      const [row] = await t.db.query(`SELECT secret, previous_secret FROM webhooks WHERE id = $1`, [created.body.id]);
      expect(row).toEqual({ secret: rotated.body.secret, previous_secret: created.body.secret });
    });
  });

  describe('list', () => {
    it("pages through the organization's webhooks, newest first, and filters by identity and status", async () => {
      const org = await signup(t, 'Paged');
      const agent = await insertIdentity(t, { organizationId: org.organizationId });
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        ids.push(
          (
            await create(bearer(org), {
              url: `${URL}/${i}`,
              events: ['*'],
              identity: i < 2 ? agent.handle : undefined,
            }).expect(201)
          ).body.id,
        );
      }
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const res: { body: { webhooks: Array<{ id: string }>; next_cursor: string | null } } = await t
          .http()
          .get(`/api/v1/webhooks?limit=2${cursor ? `&cursor=${cursor}` : ''}`)
          .set(bearer(org))
          .expect(200);
        seen.push(...res.body.webhooks.map((w) => w.id));
        cursor = res.body.next_cursor;
      } while (cursor);
      expect(seen).toEqual([...ids].reverse());
      const scoped = await t.http().get(`/api/v1/webhooks?identity=${agent.handle}`).set(bearer(org)).expect(200);
      expect(scoped.body.webhooks.map((w: { id: string }) => w.id)).toEqual([ids[1], ids[0]]);
      await t.http().patch(`/api/v1/webhooks/${ids[3]}`).set(bearer(org)).send({ status: 'disabled' }).expect(200);
      const disabled = await t.http().get('/api/v1/webhooks?status=disabled').set(bearer(org)).expect(200);
      expect(disabled.body.webhooks.map((w: { id: string }) => w.id)).toEqual([ids[3]]);
      await t.http().get('/api/v1/webhooks?cursor=nonsense').set(bearer(org)).expect(400);
    });
  });

  describe('limits', () => {
    it('refuses a 51st webhook in an organization (409 webhook_limit_reached)', async () => {
      const org = await signup(t, 'Crowded');
      const results = await Promise.all(
        Array.from({ length: 50 }, () => create(bearer(org), { url: URL, events: ['*'] })),
      );
      expect(results.map((r) => r.status)).toEqual(Array(50).fill(201));
      const res = await create(bearer(org), { url: URL, events: ['*'] }).expect(409);
      expect(res.body.code).toBe('webhook_limit_reached');
      await t.http().delete(`/api/v1/webhooks/${results[0].body.id}`).set(bearer(org)).expect(204);
      await create(bearer(org), { url: URL, events: ['*'] }).expect(201);
    });
  });
});
