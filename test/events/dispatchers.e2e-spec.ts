import { Client } from 'pg';
import { DeliveryQueue } from '../../src/events/delivery-queue';
import { startApp, type TestApp } from '../support/app';
import { urlFor } from '../support/database';
import { bearer, signup, type ConsoleAccount } from '../support/fixtures';
import { startReceiver, type Receiver } from '../support/receiver';
import { startServerProcess, startWorkerProcess } from '../support/server-process';

/** Dispatchers sharing one database: several instances, restarts, crashes, the worker process. */
describe('dispatchers on one database', () => {
  let receiver: Receiver;
  /** Holds the database (and drops it at the end) while dispatchers come and go; it delivers nothing itself. */
  let owner: TestApp;
  const apps: TestApp[] = [];
  const env = {
    WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true',
    EVENTS_POLL_INTERVAL_MS: '20',
    WEBHOOK_TIMEOUT_MS: '1000',
  };

  beforeEach(async () => {
    receiver = await startReceiver();
    owner = await startApp({ EVENTS_DISPATCHER: 'off' });
  });
  afterEach(async () => {
    for (const app of apps.splice(0)) {
      await app.close();
    }
    await owner.close();
    await receiver.close();
  });

  /** Another instance of the service, with a dispatcher, on the owner's database. */
  async function start(extra: Record<string, string> = {}): Promise<TestApp> {
    const app = await startApp({ ...env, ...extra }, owner);
    apps.push(app);
    return app;
  }

  async function subscribe(t: TestApp): Promise<{ org: ConsoleAccount; id: string; secret: string }> {
    const org = await signup(t);
    const res = await t
      .http()
      .post('/api/v1/webhooks')
      .set(bearer(org))
      .send({ url: receiver.url, events: ['*'] })
      .expect(201);
    return { org, id: res.body.id, secret: res.body.secret };
  }

  async function attempts(t: TestApp): Promise<Array<{ attempt: number; succeeded: boolean; error: string | null }>> {
    return t.db.query(`SELECT attempt, succeeded, error FROM delivery_attempts ORDER BY attempt`);
  }

  it('two dispatchers never deliver the same attempt twice', async () => {
    const a = await start({ EVENTS_BATCH_SIZE: '4' });
    const b = await start({ EVENTS_BATCH_SIZE: '4' });
    const claimed = new Map<TestApp, number>([
      [a, 0],
      [b, 0],
    ]);
    for (const app of [a, b]) {
      const queue = app.app.get(DeliveryQueue);
      const claim = queue.claim.bind(queue);
      jest.spyOn(queue, 'claim').mockImplementation(async (limit, shares) => {
        const batch = await claim(limit, shares);
        claimed.set(app, claimed.get(app)! + batch.length);
        return batch;
      });
    }
    receiver.delayMs = 5;
    const { org, id } = await subscribe(a);
    const EVENTS = 120;
    // Events are emitted through both instances, so both are woken by their own commits and both poll.
    await Promise.all(
      Array.from({ length: EVENTS }, (_, i) =>
        (i % 2 === 0 ? a : b).http().post(`/api/v1/webhooks/${id}/test`).set(bearer(org)).expect(202),
      ),
    );

    await receiver.waitFor((r) => r.length >= EVENTS, 60_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const ids = receiver.received.map((r) => String(r.headers['webhook-id']));
    expect(ids).toHaveLength(EVENTS);
    expect(new Set(ids).size).toBe(EVENTS);
    expect(receiver.accepted()).toHaveLength(EVENTS);
    const log = await attempts(a);
    expect(log).toHaveLength(EVENTS);
    // Any other row is shown with its error, should one appear.
    expect(log.filter((row) => !(row.attempt === 1 && row.succeeded))).toEqual([]);
    // Both took part: the guarantee comes from the claim, not from one of them idling.
    expect(claimed.get(a)).toBeGreaterThan(0);
    expect(claimed.get(b)).toBeGreaterThan(0);
    expect(claimed.get(a)! + claimed.get(b)!).toBe(EVENTS);
  });

  it('a restart in the middle of the retries loses nothing; the event arrives exactly once', async () => {
    const first = await start({ WEBHOOK_RETRY_SCHEDULE_MS: '1500,1500' });
    const { org, id } = await subscribe(first);
    receiver.respond = () => 503;
    const ping = await first.http().post(`/api/v1/webhooks/${id}/test`).set(bearer(org)).expect(202);
    await receiver.waitFor((r) => r.length === 1);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await first.close(); // graceful: the attempt in flight was recorded
    apps.splice(apps.indexOf(first), 1);
    const [pending] = await queryDatabase(`SELECT status, attempts, in_flight FROM deliveries WHERE id = $1`, [
      ping.body.id,
    ]);
    expect(pending).toEqual({ status: 'pending', attempts: 1, in_flight: false });

    receiver.respond = () => 200;
    const second = await start({ WEBHOOK_RETRY_SCHEDULE_MS: '1500,1500' });
    await receiver.waitFor((r) => r.some((x) => x.status === 200));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.received.map((r) => [r.headers['webhook-id'], r.status])).toEqual([
      [ping.body.event_id, 503],
      [ping.body.event_id, 200],
    ]);
    expect(await attempts(second)).toEqual([
      { attempt: 1, succeeded: false, error: 'HTTP 503' },
      { attempt: 2, succeeded: true, error: null },
    ]);
  });

  it('a crash in the middle of a send loses nothing: the lease runs out and another dispatcher delivers', async () => {
    const crashing = await startServerProcess({
      ...env,
      DATABASE_URL: urlFor(owner.database),
      MIGRATIONS_RUN: 'false',
    });
    try {
      const org = await signupAt(crashing.baseUrl);
      const hook = await post(crashing.baseUrl, '/api/v1/webhooks', org, { url: receiver.url, events: ['*'] });
      receiver.respond = ({ nth }) => (nth === 0 ? 'hang' : 200);
      const ping = await post(crashing.baseUrl, `/api/v1/webhooks/${hook.id}/test`, org, {});
      await receiver.waitFor((r) => r.length === 1);
      await crashing.stop('SIGKILL'); // mid-send: nothing recorded, the claim is left in flight
      const [claimed] = await queryDatabase(`SELECT attempts, in_flight FROM deliveries WHERE id = $1`, [ping.id]);
      expect(claimed).toEqual({ attempts: 1, in_flight: true });

      const survivor = await start();
      await receiver.waitFor((r) => r.some((x) => x.status === 200), 30_000);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(receiver.accepted().map((r) => r.headers['webhook-id'])).toEqual([ping.event_id]);
      expect(await attempts(survivor)).toEqual([
        { attempt: 1, succeeded: false, error: 'interrupted: the dispatcher stopped before the result was recorded' },
        { attempt: 2, succeeded: true, error: null },
      ]);
    } finally {
      await crashing.stop('SIGKILL');
    }
  });

  it('npm run worker delivers for servers that run no dispatcher, logs no secret or body, and stops gracefully', async () => {
    const server = await start({ EVENTS_DISPATCHER: 'off' });
    const { org, id, secret } = await subscribe(server);
    const ping = await server.http().post(`/api/v1/webhooks/${id}/test`).set(bearer(org)).expect(202);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.received).toHaveLength(0);

    const worker = await startWorkerProcess({ ...env, DATABASE_URL: urlFor(owner.database), MIGRATIONS_RUN: 'false' });
    try {
      await receiver.waitFor((r) => r.length === 1);
      expect(receiver.received[0].headers['webhook-id']).toBe(ping.body.event_id);
    } finally {
      expect(await worker.stop('SIGTERM')).toBe(0);
    }
    expect(worker.output()).toContain('event worker started');
    expect(worker.output()).not.toContain(secret.slice(6));
    expect(worker.output()).not.toContain(receiver.received[0].body);
    expect(worker.output()).not.toContain('A test event');
  });

  /** A query on the shared database, whether or not an app of the test is running on it. */
  async function queryDatabase(sql: string, params: unknown[]): Promise<any[]> {
    const client = new Client({ connectionString: urlFor(owner.database) });
    await client.connect();
    try {
      return (await client.query(sql, params)).rows;
    } finally {
      await client.end();
    }
  }
});

async function signupAt(baseUrl: string): Promise<{ token: string }> {
  const res = await fetch(`${baseUrl}/api/v1/console/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      organization_name: 'Crash',
      email: `crash-${Date.now()}@example.test`,
      password: 'correct horse battery staple',
    }),
  });
  return (await res.json()) as { token: string };
}

async function post(baseUrl: string, path: string, org: { token: string }, body: object): Promise<any> {
  const res = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${org.token}` },
    body: JSON.stringify(body),
  });
  if (res.status >= 300) {
    throw new Error(`${path}: ${res.status} ${await res.text()}`);
  }
  return res.json();
}
