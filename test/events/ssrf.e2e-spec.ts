import { createServer, type Server } from 'node:net';
import { createLogger } from '../../src/common/logger';
import { startApp, type TestApp } from '../support/app';
import { eventually } from '../support/eventually';
import { bearer, signup, type ConsoleAccount } from '../support/fixtures';
import { logLines } from '../support/log-entries';

/**
 * The webhook URL rules (docs/api.md §8, "Delivery") with WEBHOOKS_ALLOW_PRIVATE_NETWORKS off (the production
 * default): https only, and never a loopback, private, link-local or metadata
 * address — refused when saved if the URL names one, and at send time, after DNS
 * resolution, when a host name resolves to one.
 */
describe('SSRF protection', () => {
  let t: TestApp;
  let acme: ConsoleAccount;
  let listener: Server;
  let port: number;
  let connections = 0;
  const lines: string[] = [];

  beforeAll(async () => {
    // A retry schedule that would retry within the test, were a refusal retried.
    t = await startApp(
      { EVENTS_POLL_INTERVAL_MS: '50', WEBHOOK_RETRY_SCHEDULE_MS: '100,100,100' },
      undefined,
      createLogger('warn', logLines(lines)),
    );
    acme = await signup(t, 'Acme');
    // Something listening on loopback that must never be reached.
    listener = createServer((socket) => {
      connections += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    port = (listener.address() as { port: number }).port;
  });
  afterAll(async () => {
    await t.close();
    await new Promise((resolve) => listener.close(resolve));
  });

  it.each([
    ['http', 'http://hooks.example.com/a2a'],
    ['loopback', 'https://127.0.0.1/a2a'],
    ['loopback (IPv6)', 'https://[::1]/a2a'],
    ['loopback (IPv4-mapped IPv6)', 'https://[::ffff:127.0.0.1]/a2a'],
    ['loopback (decimal)', 'https://2130706433/a2a'],
    ['private', 'https://10.1.2.3/a2a'],
    ['private', 'https://192.168.0.10/a2a'],
    ['private (IPv6)', 'https://[fd00::1]/a2a'],
    ['link-local', 'https://169.254.10.20/a2a'],
    ['metadata', 'https://169.254.169.254/latest/meta-data/'],
    ['metadata (IPv6)', 'https://[fd00:ec2::254]/latest/meta-data/'],
    ['unspecified', 'https://0.0.0.0/a2a'],
    ['carrier-grade NAT', 'https://100.64.0.1/a2a'],
  ])('refuses a %s URL when it is saved (400)', async (_, url) => {
    const res = await t
      .http()
      .post('/api/v1/webhooks')
      .set(bearer(acme))
      .send({ url, events: ['*'] })
      .expect(400);
    expect(res.body.code).toBe('invalid_webhook_url');
  });

  it('refuses the same when a URL is changed', async () => {
    const created = await t
      .http()
      .post('/api/v1/webhooks')
      .set(bearer(acme))
      .send({ url: 'https://hooks.example.invalid/a2a', events: ['*'] })
      .expect(201);
    const res = await t
      .http()
      .patch(`/api/v1/webhooks/${created.body.id}`)
      .set(bearer(acme))
      .send({ url: 'https://169.254.169.254/' })
      .expect(400);
    expect(res.body.code).toBe('invalid_webhook_url');
  });

  it('refuses at send time a host name that resolves to a loopback address, without connecting, without saying what it resolves to, and for good', async () => {
    const created = await t
      .http()
      .post('/api/v1/webhooks')
      .set(bearer(acme))
      .send({ url: `https://localhost:${port}/a2a`, events: ['*'] })
      .expect(201);
    const ping = await t.http().post(`/api/v1/webhooks/${created.body.id}/test`).set(bearer(acme)).expect(202);
    const delivery = await eventually(
      async () =>
        (await t.http().get(`/api/v1/webhooks/${created.body.id}/deliveries`).set(bearer(acme)).expect(200)).body
          .deliveries[0],
      (d: { id: string; status: string; attempts: unknown[] }) => d.status !== 'pending',
    );
    expect(delivery.id).toBe(ping.body.id);
    expect(delivery.attempts).toEqual([
      expect.objectContaining({
        attempt: 1,
        succeeded: false,
        status_code: null,
        error: 'refused: the destination is not allowed',
      }),
    ]);
    // Final: failed after one attempt, not retried on the schedule.
    expect(delivery).toMatchObject({
      status: 'failed',
      attempt_count: 1,
      next_attempt_at: null,
      last_error: 'refused: the destination is not allowed',
    });
    expect(connections).toBe(0);
    const everything = JSON.stringify(delivery) + lines.join('\n');
    expect(everything).not.toMatch(/127\.0\.0\.1|::1|loopback/);

    // The failed attempt is logged at warn, with the webhook id and the reason (never the secret).
    const logged = lines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((entry) => entry.msg === 'webhook delivery failed' && entry.webhook_id === created.body.id);
    expect(logged).toEqual([
      expect.objectContaining({
        level: 40,
        webhook_id: created.body.id,
        delivery_id: ping.body.id,
        attempt: 1,
        reason: 'refused: the destination is not allowed',
        final: true,
      }),
    ]);
    expect(lines.join('\n')).not.toContain(created.body.secret);
  });
});
