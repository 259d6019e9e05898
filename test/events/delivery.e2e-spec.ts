import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Database } from '../../src/database/database';
import { EventsService } from '../../src/events/events.service';
import { KeysService } from '../../src/keys/keys.service';
import { startApp, type TestApp } from '../support/app';
import { eventually } from '../support/eventually';
import { apiKey, bearer, insertIdentity, mintAdminKey, signup, type ConsoleAccount } from '../support/fixtures';
import { startReceiver, verified, type Envelope, type ReceivedRequest, type Receiver } from '../support/receiver';

const envelopes = (received: ReceivedRequest[]) => received.map((r) => JSON.parse(r.body) as Envelope);
const ofType = (type: string) => (received: ReceivedRequest[]) => envelopes(received).filter((e) => e.type === type);

describe('event delivery', () => {
  let t: TestApp;
  let receiver: Receiver;

  beforeAll(async () => {
    t = await startApp({
      WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true',
      EVENTS_POLL_INTERVAL_MS: '50',
      WEBHOOK_RETRY_SCHEDULE_MS: '100,100,100,100',
      WEBHOOK_TIMEOUT_MS: '1000',
    });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });
  beforeEach(() => {
    receiver.respond = () => 200;
  });

  /** A fresh organization with a webhook on its own path of the receiver. */
  async function subscribed(
    events: string[] = ['*'],
    extra: object = {},
  ): Promise<{ org: ConsoleAccount; id: string; secret: string; path: string }> {
    const org = await signup(t);
    const path = `${receiver.url}/${org.organizationId}`;
    const res = await t
      .http()
      .post('/api/v1/webhooks')
      .set(bearer(org))
      .send({ url: path, events, ...extra })
      .expect(201);
    return { org, id: res.body.id, secret: res.body.secret, path };
  }
  const at = (organizationId: string) => (received: ReceivedRequest[]) =>
    received.filter((r) => (JSON.parse(r.body) as Envelope).organization_id === organizationId);

  describe('API key events', () => {
    it('api_key.created and api_key.revoked arrive signed, once, with key metadata and never the key', async () => {
      const { org, id, secret } = await subscribed();
      const minted = await t
        .http()
        .post('/api/v1/api-keys')
        .set(bearer(org))
        .send({ scope: 'admin', label: 'ci' })
        .expect(201);
      await t.http().post('/api-keys/self/revoke').set(apiKey(minted.body.key)).expect(200);

      const received = at(org.organizationId)(await receiver.waitFor((r) => at(org.organizationId)(r).length >= 2));
      // Deliveries may arrive in any order; event ids sort by creation time.
      const [created, revoked] = received.map((r) => verified(secret, r)).sort((a, b) => a.id.localeCompare(b.id));
      expect(created).toEqual({
        id: expect.stringMatching(/^evt_[0-9A-Z]{26}$/),
        type: 'api_key.created',
        created_at: expect.any(String),
        organization_id: org.organizationId,
        data: { api_key: { ...minted.body, key: undefined } },
      });
      expect(revoked).toMatchObject({
        type: 'api_key.revoked',
        data: { api_key: { id: minted.body.id, status: 'revoked', revoked_at: expect.any(String) } },
      });
      for (const request of received) {
        expect(JSON.parse(request.body).data.api_key).not.toHaveProperty('key');
        expect(request.body).not.toContain(minted.body.key.slice(12));
        expect(request.headers['webhook-id']).toBe(JSON.parse(request.body).id);
        expect(request.headers['content-type']).toBe('application/json');
      }
      const [stored] = await t.db.query(`SELECT count(*)::int AS count FROM events WHERE data::text LIKE $1`, [
        `%${minted.body.key.slice(12)}%`,
      ]);
      expect(stored.count).toBe(0);

      const deliveries = await waitForDeliveries(org, id, (all) => all.every((d) => d.status === 'succeeded'));
      expect(deliveries.map((d) => [d.event_type, d.status, d.attempt_count, d.attempts.length])).toEqual([
        ['api_key.revoked', 'succeeded', 1, 1],
        ['api_key.created', 'succeeded', 1, 1],
      ]);
      expect(at(org.organizationId)(receiver.received)).toHaveLength(2);
    });

    it('the envelope keeps the key order of the REST view', async () => {
      const { org } = await subscribed();
      const minted = await t.http().post('/api/v1/api-keys').set(bearer(org)).send({ scope: 'admin' }).expect(201);
      const [request] = at(org.organizationId)(await receiver.waitFor((r) => at(org.organizationId)(r).length >= 1));
      expect(Object.keys(JSON.parse(request.body))).toEqual(['id', 'type', 'created_at', 'organization_id', 'data']);
      expect(Object.keys(JSON.parse(request.body).data.api_key)).toEqual(
        Object.keys(minted.body).filter((k) => k !== 'key'),
      );
    });

    it('revoking every key of an identity emits one api_key.revoked per key that was active', async () => {
      const { org } = await subscribed(['api_key.revoked']);
      const identity = await insertIdentity(t, { organizationId: org.organizationId });
      const keys = t.app.get(KeysService);
      await t.app.get(Database).transaction(async (em) => {
        for (let i = 0; i < 3; i++) {
          await keys.mintWith(em, {
            scope: 'agent',
            identityId: identity.id,
            createdBy: { type: 'console_user', id: org.userId },
          });
        }
      });
      await t.app.get(Database).transaction((em) => keys.revokeAllForIdentity(em, identity.id));
      await t.app.get(Database).transaction((em) => keys.revokeAllForIdentity(em, identity.id)); // nothing left to revoke: no event
      const revoked = ofType('api_key.revoked')(
        at(org.organizationId)(await receiver.waitFor((r) => at(org.organizationId)(r).length >= 3)),
      );
      expect(revoked).toHaveLength(3);
      expect(new Set(revoked.map((e) => e.data.api_key.id)).size).toBe(3);
      const [{ count }] = await t.db.query(`SELECT count(*)::int AS count FROM events WHERE organization_id = $1`, [
        org.organizationId,
      ]);
      expect(count).toBe(6); // 3 created (nobody subscribed to them, still in the outbox) + 3 revoked
    });
  });

  describe('the outbox is transactional', () => {
    it('a change that rolls back emits nothing', async () => {
      const { org, id } = await subscribed();
      const keys = t.app.get(KeysService);
      await expect(
        t.app.get(Database).transaction(async (em) => {
          await keys.mintWith(em, {
            scope: 'admin',
            organizationId: org.organizationId,
            createdBy: { type: 'console_user', id: org.userId },
          });
          throw new Error('the change fails after its event was written');
        }),
      ).rejects.toThrow('the change fails');
      const [{ count }] = await t.db.query(`SELECT count(*)::int AS count FROM events WHERE organization_id = $1`, [
        org.organizationId,
      ]);
      expect(count).toBe(0);
      // A later, committed change is delivered; the rolled back one never is.
      await t.http().post(`/api/v1/webhooks/${id}/test`).set(bearer(org)).expect(202);
      const received = at(org.organizationId)(await receiver.waitFor((r) => at(org.organizationId)(r).length >= 1));
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(envelopes(at(org.organizationId)(receiver.received)).map((e) => e.type)).toEqual(['ping']);
      expect(received).toHaveLength(1);
    });

    it('an event outside its transaction (one that has ended) is a programming error', async () => {
      const org = await signup(t);
      const ended = await t.app.get(Database).transaction(async (tx) => tx);
      await expect(
        t.app.get(EventsService).emit(ended, { type: 'ping', organizationId: org.organizationId, data: {} }),
      ).rejects.toThrow('inside the transaction');
    });
  });

  describe('matching subscriptions', () => {
    it('a filter receives only its types; a subscription scoped to an identity never receives key events', async () => {
      const org = await signup(t);
      const identity = await insertIdentity(t, { organizationId: org.organizationId });
      const make = async (events: string[], identityHandle?: string) => {
        const res = await t
          .http()
          .post('/api/v1/webhooks')
          .set(bearer(org))
          .send({
            url: `${receiver.url}/${org.organizationId}/${events.join('+')}${identityHandle ?? ''}`,
            events,
            identity: identityHandle,
          })
          .expect(201);
        return res.body.id as string;
      };
      const revokedOnly = await make(['api_key.revoked']);
      const everything = await make(['*']);
      const scoped = await make(['*'], identity.handle);
      const minted = await t
        .http()
        .post('/api/v1/api-keys')
        .set(bearer(org))
        .send({ scope: 'agent', scoped_identity_id: identity.id })
        .expect(201);
      await t.http().post('/api-keys/self/revoke').set(apiKey(minted.body.key)).expect(200);
      await receiver.waitFor((r) => at(org.organizationId)(r).length >= 3);
      await new Promise((resolve) => setTimeout(resolve, 300));

      const deliveries = async (id: string) =>
        (await t.http().get(`/api/v1/webhooks/${id}/deliveries`).set(bearer(org)).expect(200)).body.deliveries
          .map((d: { event_type: string }) => d.event_type)
          .sort();
      expect(await deliveries(revokedOnly)).toEqual(['api_key.revoked']);
      expect(await deliveries(everything)).toEqual(['api_key.created', 'api_key.revoked']);
      expect(await deliveries(scoped)).toEqual([]);
      expect(at(org.organizationId)(receiver.received)).toHaveLength(3);
    });

    it("another organization's events never reach a subscription", async () => {
      const mine = await subscribed();
      const other = await signup(t);
      await mintAdminKey(t, other);
      await t.http().post(`/api/v1/webhooks/${mine.id}/test`).set(bearer(mine.org)).expect(202);
      await receiver.waitFor((r) => at(mine.org.organizationId)(r).length >= 1);
      const deliveries = await t.http().get(`/api/v1/webhooks/${mine.id}/deliveries`).set(bearer(mine.org)).expect(200);
      expect(deliveries.body.deliveries.map((d: { event_type: string }) => d.event_type)).toEqual(['ping']);
    });
  });

  describe('test ping', () => {
    it('sends a signed ping to that webhook only, whatever its filter', async () => {
      const { org, id, secret } = await subscribed(['task.created']);
      const ping = await t.http().post(`/api/v1/webhooks/${id}/test`).set(bearer(org)).expect(202);
      const [request] = at(org.organizationId)(await receiver.waitFor((r) => at(org.organizationId)(r).length >= 1));
      expect(verified(secret, request)).toMatchObject({
        id: ping.body.event_id,
        type: 'ping',
        data: { webhook_id: id },
      });
    });
  });

  describe('secret rotation', () => {
    it('signs with both secrets for 24 hours, then with the new one only', async () => {
      const { org, id, secret: old } = await subscribed();
      const rotated = await t.http().post(`/api/v1/webhooks/${id}/rotate-secret`).set(bearer(org)).expect(200);
      await t.http().post(`/api/v1/webhooks/${id}/test`).set(bearer(org)).expect(202);
      const [during] = at(org.organizationId)(await receiver.waitFor((r) => at(org.organizationId)(r).length >= 1));
      expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2);
      expect(verified(rotated.body.secret, during).type).toBe('ping');
      expect(verified(old, during).type).toBe('ping');

      // 24 hours later.
      await t.db.query(`UPDATE webhooks SET previous_secret_expires_at = now() - interval '1 second' WHERE id = $1`, [
        id,
      ]);
      await t.http().post(`/api/v1/webhooks/${id}/test`).set(bearer(org)).expect(202);
      const after = at(org.organizationId)(await receiver.waitFor((r) => at(org.organizationId)(r).length >= 2))[1];
      expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1);
      expect(verified(rotated.body.secret, after).type).toBe('ping');
      expect(() => verified(old, after)).toThrow('No matching signature');
      const read = await t.http().get(`/api/v1/webhooks/${id}`).set(bearer(org)).expect(200);
      expect(read.body.previous_secret_expires_at).toBeNull();
    });
  });

  describe('failure and recovery', () => {
    it('retries on the schedule until the endpoint answers 2xx; the event then arrives exactly once, every attempt logged', async () => {
      const { org, id, secret, path } = await subscribed();
      receiver.respond = ({ nth }) => (nth < 3 ? 503 : 204);
      const ping = await t.http().post(`/api/v1/webhooks/${id}/test`).set(bearer(org)).expect(202);
      const forPath = (r: ReceivedRequest[]) => at(org.organizationId)(r);
      await receiver.waitFor((r) => forPath(r).some((x) => x.status === 204));
      await new Promise((resolve) => setTimeout(resolve, 500));

      const received = forPath(receiver.received);
      expect(received.map((r) => r.status)).toEqual([503, 503, 503, 204]);
      expect(new Set(received.map((r) => r.headers['webhook-id']))).toEqual(new Set([ping.body.event_id]));
      for (const request of received) {
        expect(verified(secret, request).id).toBe(ping.body.event_id);
      }
      expect(path).toContain(org.organizationId);

      const res = await t.http().get(`/api/v1/webhooks/${id}/deliveries`).set(bearer(org)).expect(200);
      const [delivery] = res.body.deliveries;
      expect(delivery).toMatchObject({
        id: ping.body.id,
        status: 'succeeded',
        attempt_count: 4,
        next_attempt_at: null,
        last_status_code: 204,
        last_error: null,
      });
      expect(
        delivery.attempts.map(
          (a: { attempt: number; succeeded: boolean; status_code: number; error: string | null }) => [
            a.attempt,
            a.succeeded,
            a.status_code,
            a.error,
          ],
        ),
      ).toEqual([
        [1, false, 503, 'HTTP 503'],
        [2, false, 503, 'HTTP 503'],
        [3, false, 503, 'HTTP 503'],
        [4, true, 204, null],
      ]);
      expect(delivery.attempts.every((a: { duration_ms: number }) => a.duration_ms >= 0)).toBe(true);
      // What each attempt was answered (headers and the body's start), and the body it sent, byte for byte.
      for (const attempt of delivery.attempts) {
        expect(attempt.response).toEqual({
          headers: expect.objectContaining({ 'content-type': 'text/plain' }),
          body: attempt.status_code === 204 ? '' : 'ok', // a 204 has no body
        });
      }
      expect(delivery.request_body).toBe(received[0].body);
      const webhook = await t.http().get(`/api/v1/webhooks/${id}`).set(bearer(org)).expect(200);
      expect(webhook.body.failing_since).toBeNull();
    });

    it('fails the delivery when the schedule is spent; a manual retry delivers it', async () => {
      const { org, id } = await subscribed();
      receiver.respond = () => 500;
      const ping = await t.http().post(`/api/v1/webhooks/${id}/test`).set(bearer(org)).expect(202);
      await receiver.waitFor((r) => at(org.organizationId)(r).length >= 5);
      const failed = await waitForDelivery(org, id, ping.body.id, (d) => d.status === 'failed');
      expect(failed).toMatchObject({ attempt_count: 5, next_attempt_at: null, last_status_code: 500 });
      const webhook = await t.http().get(`/api/v1/webhooks/${id}`).set(bearer(org)).expect(200);
      expect(webhook.body).toMatchObject({ status: 'active', failing_since: expect.any(String) });

      receiver.respond = () => 200;
      const retried = await t
        .http()
        .post(`/api/v1/webhooks/${id}/deliveries/${ping.body.id}/retry`)
        .set(bearer(org))
        .expect(202);
      expect(retried.body.status).toBe('pending');
      const done = await waitForDelivery(org, id, ping.body.id, (d) => d.status === 'succeeded');
      expect(done).toMatchObject({ attempt_count: 6, last_status_code: 200 });
      expect(at(org.organizationId)(receiver.received).map((r) => r.status)).toEqual([500, 500, 500, 500, 500, 200]);
    });

    it('a receiver that does not answer in time is a failed attempt (timeout)', async () => {
      const { org, id } = await subscribed();
      receiver.respond = ({ nth }) => (nth === 0 ? 'hang' : 200);
      const ping = await t.http().post(`/api/v1/webhooks/${id}/test`).set(bearer(org)).expect(202);
      const done = await waitForDelivery(org, id, ping.body.id, (d) => d.status === 'succeeded');
      expect(done.attempts.map((a: { error: string | null }) => a.error)).toEqual([
        expect.stringContaining('timeout'),
        null,
      ]);
    });

    it("an attempt keeps the response's first 1,024 bytes and its headers, never a cookie or credential header", async () => {
      const answering = createServer((req, res) => {
        req.resume();
        res.writeHead(500, {
          'content-type': 'text/plain',
          'x-request-trace': 'abc',
          'set-cookie': 'session=receiver-secret',
          'www-authenticate': 'Bearer realm="receiver-secret"',
        });
        res.end('é'.repeat(1000)); // 2,000 bytes: cut at 1,024
      });
      await new Promise<void>((resolve) => answering.listen(0, '127.0.0.1', resolve));
      try {
        const org = await signup(t);
        const url = `http://127.0.0.1:${(answering.address() as AddressInfo).port}/hook`;
        const hook = await t
          .http()
          .post('/api/v1/webhooks')
          .set(bearer(org))
          .send({ url, events: ['*'] })
          .expect(201);
        const ping = await t.http().post(`/api/v1/webhooks/${hook.body.id}/test`).set(bearer(org)).expect(202);
        const [first] = (await waitForDelivery(org, hook.body.id, ping.body.id, (d) => d.attempts.length > 0)).attempts;
        expect(first.response.headers).toMatchObject({ 'content-type': 'text/plain', 'x-request-trace': 'abc' });
        expect(first.response.headers).not.toHaveProperty('set-cookie');
        expect(first.response.headers).not.toHaveProperty('www-authenticate');
        expect(JSON.stringify(first)).not.toContain('receiver-secret');
        expect(first.response.body).toBe('é'.repeat(512));
      } finally {
        await new Promise((resolve) => answering.close(resolve));
      }
    });

    it('a redirect is not followed and counts as a failure', async () => {
      const { org, id } = await subscribed();
      receiver.respond = ({ nth }) => (nth === 0 ? 307 : 200);
      const ping = await t.http().post(`/api/v1/webhooks/${id}/test`).set(bearer(org)).expect(202);
      const done = await waitForDelivery(org, id, ping.body.id, (d) => d.status === 'succeeded');
      expect(done.attempts.map((a: { status_code: number }) => a.status_code)).toEqual([307, 200]);
    });

    it('an endpoint failing for 5 days is disabled, and what waited for it fails', async () => {
      const { org, id } = await subscribed();
      receiver.respond = () => 500;
      // The endpoint has been failing since 5 days and a minute ago; one more delivery is waiting.
      await t.db.query(`UPDATE webhooks SET failing_since = now() - interval '5 days 1 minute' WHERE id = $1`, [id]);
      const ping = await t.http().post(`/api/v1/webhooks/${id}/test`).set(bearer(org)).expect(202);
      const failed = await waitForDelivery(org, id, ping.body.id, (d) => d.status === 'failed');
      expect(failed.attempt_count).toBe(1);
      const webhook = await t.http().get(`/api/v1/webhooks/${id}`).set(bearer(org)).expect(200);
      expect(webhook.body.status).toBe('disabled');
      // A disabled webhook receives nothing more.
      await t.http().post('/api/v1/api-keys').set(bearer(org)).send({ scope: 'admin' }).expect(201);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(at(org.organizationId)(receiver.received)).toHaveLength(1);
    });

    it('an endpoint failing for less than 5 days stays enabled', async () => {
      const { org, id } = await subscribed();
      receiver.respond = () => 500;
      await t.db.query(`UPDATE webhooks SET failing_since = now() - interval '4 days 23 hours' WHERE id = $1`, [id]);
      const ping = await t.http().post(`/api/v1/webhooks/${id}/test`).set(bearer(org)).expect(202);
      await waitForDelivery(org, id, ping.body.id, (d) => d.attempt_count >= 2);
      const webhook = await t.http().get(`/api/v1/webhooks/${id}`).set(bearer(org)).expect(200);
      expect(webhook.body.status).toBe('active');
    });
  });

  /** Reads a webhook's deliveries until they satisfy `predicate`. */
  async function waitForDeliveries(
    org: ConsoleAccount,
    webhookId: string,
    predicate: (all: any[]) => boolean,
  ): Promise<any[]> {
    return eventually(
      async () =>
        (await t.http().get(`/api/v1/webhooks/${webhookId}/deliveries`).set(bearer(org)).expect(200)).body.deliveries,
      predicate,
    );
  }

  async function waitForDelivery(
    org: ConsoleAccount,
    webhookId: string,
    deliveryId: string,
    predicate: (d: any) => boolean,
  ): Promise<any> {
    const match = (all: any[]) => all.find((d: { id: string }) => d.id === deliveryId);
    return match(await waitForDeliveries(org, webhookId, (all) => match(all) !== undefined && predicate(match(all))));
  }
});
