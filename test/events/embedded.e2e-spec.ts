import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { eventually } from '../support/eventually';
import { openEventStream } from '../support/event-stream';
import { PASSWORD } from '../support/fixtures';
import { startReceiver, verified } from '../support/receiver';
import { startServerProcess } from '../support/server-process';

/** The outbox and the dispatcher on the embedded PGlite: one connection, the same SQL. */
describe('events on the embedded database', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'a2a-events-embedded-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('delivers a signed event, and retries, with the inline dispatcher', async () => {
    const receiver = await startReceiver(({ nth }) => (nth === 0 ? 500 : 200));
    const server = await startServerProcess({
      DATA_DIR: dataDir,
      WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true',
      EVENTS_POLL_INTERVAL_MS: '50',
      WEBHOOK_RETRY_SCHEDULE_MS: '100',
    });
    try {
      const session = await request(server.baseUrl)
        .post('/api/v1/console/signup')
        .send({ organization_name: 'Local', email: 'events@local.test', password: PASSWORD })
        .expect(201);
      const auth = { Authorization: `Bearer ${session.body.token}` };
      const hook = await request(server.baseUrl)
        .post('/api/v1/webhooks')
        .set(auth)
        .send({ url: receiver.url, events: ['api_key.created'] })
        .expect(201);
      const minted = await request(server.baseUrl)
        .post('/api/v1/api-keys')
        .set(auth)
        .send({ scope: 'admin' })
        .expect(201);

      await receiver.waitFor((r) => r.some((x) => x.status === 200));
      const accepted = receiver.accepted();
      expect(accepted).toHaveLength(1);
      const envelope = verified(hook.body.secret, accepted[0]);
      expect(envelope).toMatchObject({ type: 'api_key.created', data: { api_key: { id: minted.body.id } } });
      const deliveries = await eventually(
        async () =>
          (await request(server.baseUrl).get(`/api/v1/webhooks/${hook.body.id}/deliveries`).set(auth).expect(200)).body
            .deliveries,
        (all: Array<{ status: string }>) => all.every((d) => d.status !== 'pending'),
      );
      expect(deliveries).toEqual([expect.objectContaining({ status: 'succeeded', attempt_count: 2 })]);
      expect(await server.stop('SIGTERM')).toBe(0);
    } finally {
      await server.stop('SIGKILL');
      await receiver.close();
    }
  });

  it('streams events as they commit, woken by the in-process bus', async () => {
    const server = await startServerProcess({ DATA_DIR: join(dataDir, 'stream') });
    try {
      const session = await request(server.baseUrl)
        .post('/api/v1/console/signup')
        .send({ organization_name: 'Local', email: 'stream@local.test', password: PASSWORD })
        .expect(201);
      const auth = { Authorization: `Bearer ${session.body.token}` };
      const stream = await openEventStream(server.baseUrl, auth);
      const minted = await request(server.baseUrl)
        .post('/api/v1/api-keys')
        .set(auth)
        .send({ scope: 'admin' })
        .expect(201);
      const event = await stream.next();
      expect(event!.data).toMatchObject({ type: 'api_key.created', data: { api_key: { id: minted.body.id } } });
      await stream.close();
      const resumed = await openEventStream(server.baseUrl, auth, { lastEventId: event!.id });
      await request(server.baseUrl).post('/api/v1/api-keys').set(auth).send({ scope: 'admin' }).expect(201);
      expect((await resumed.next())!.id).not.toBe(event!.id);
      await resumed.close();
    } finally {
      await server.stop('SIGKILL');
    }
  });
});
