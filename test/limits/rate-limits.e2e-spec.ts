import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { startApp, type TestApp } from '../support/app';
import { eventually } from '../support/eventually';
import { freePort } from '../support/server-process';
import { apiKey, bearer, mintAdminKey, PASSWORD, signup } from '../support/fixtures';

const RATE_LIMIT_POLICY = /^"(\w+)";q=(\d+);w=(\d+)$/;
const RATE_LIMIT = /^"(\w+)";r=(\d+);t=(\d+)$/;

describe('rate limits', () => {
  describe('in memory (one instance)', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startApp({ RATE_LIMIT_REST_PER_MINUTE: '5', RATE_LIMIT_PUBLIC_PER_MINUTE: '200' });
    });
    afterAll(() => t.close());

    it('per API key: the sixth REST request in a minute gets 429 with Retry-After and RateLimit headers', async () => {
      const key = await mintAdminKey(t, await signup(t));
      for (let i = 0; i < 5; i++) {
        const ok = await t.http().get('/api-keys/self').set(apiKey(key)).expect(200);
        expect(ok.headers['ratelimit-policy']).toBe('"rest";q=5;w=60');
        expect(RATE_LIMIT.exec(ok.headers.ratelimit)![2]).toBe(String(4 - i));
      }
      const limited = await t.http().get('/api-keys/self').set(apiKey(key)).expect(429);
      expect(limited.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(limited.body.code).toBe('rate_limited');
      const retryAfter = Number(limited.headers['retry-after']);
      expect(retryAfter).toBeGreaterThan(0);
      expect(limited.headers['ratelimit-policy']).toMatch(RATE_LIMIT_POLICY);
      const [, quota, remaining, reset] = RATE_LIMIT.exec(limited.headers.ratelimit)!;
      expect({ quota, remaining, reset: Number(reset) }).toEqual({ quota: 'rest', remaining: '0', reset: retryAfter });
    });

    it("one tenant's flood does not block another tenant, nor another key of the same tenant", async () => {
      const flooded = await signup(t);
      const noisy = await mintAdminKey(t, flooded);
      const quiet = await mintAdminKey(t, flooded);
      const other = await mintAdminKey(t, await signup(t));
      for (let i = 0; i < 5; i++) {
        await t.http().get('/api-keys/self').set(apiKey(noisy)).expect(200);
      }
      await t.http().get('/api-keys/self').set(apiKey(noisy)).expect(429);
      await t.http().get('/api-keys/self').set(apiKey(quiet)).expect(200);
      await t.http().get('/api-keys/self').set(apiKey(other)).expect(200);
    });

    it('Console sessions are limited per user', async () => {
      const account = await signup(t);
      for (let i = 0; i < 5; i++) {
        await t.http().get('/api/v1/console/me').set(bearer(account)).expect(200);
      }
      await t.http().get('/api/v1/console/me').set(bearer(account)).expect(429);
    });
  });

  describe('per client address on public routes and failed authentication', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startApp({ RATE_LIMIT_PUBLIC_PER_MINUTE: '4' });
    });
    afterAll(() => t.close());

    it('public routes share the address budget; failed authentications spend it too', async () => {
      await t.http().get('/healthz').expect(200);
      await t.http().get('/healthz').expect(200);
      const wrong = await t
        .http()
        .get('/api-keys/self')
        .set(apiKey('a2a_adm_0000000000000000000000000000000000000'))
        .expect(401);
      expect(wrong.headers['ratelimit-policy']).toBe('"public";q=4;w=60');
      await t.http().get('/api-keys/self').expect(401);
      const limited = await t.http().get('/healthz').expect(429);
      expect(limited.headers['ratelimit-policy']).toBe('"public";q=4;w=60');
      await t.http().get('/api-keys/self').set(apiKey('a2a_adm_0000000000000000000000000000000000000')).expect(429);
    });
  });

  it('an IPv6 client is counted by its /64: a fresh address in the same /64 shares the budget', async () => {
    const t = await startApp({ RATE_LIMIT_PUBLIC_PER_MINUTE: '2', TRUST_PROXY: 'true' });
    try {
      const from = (address: string) => t.http().get('/healthz').set('X-Forwarded-For', address);
      await from('2001:db8:77:1::1').expect(200);
      await from('2001:db8:77:1:a:b:c:d').expect(200);
      await from('2001:db8:77:1:ffff:ffff:ffff:fffe').expect(429); // another address, same /64
      await from('2001:db8:77:2::1').expect(200); // the next /64 is another subject
    } finally {
      await t.close();
    }
  });

  it('agent signups: 10 an hour per client address by default, configurable', async () => {
    const t = await startApp({ RATE_LIMIT_SIGNUPS_PER_HOUR: '2' });
    try {
      const signupAgent = (handle: string) => t.http().post('/api/v1/agent-signup').send({ agent_handle: handle });
      await signupAgent(`quota-${randomBytes(3).toString('hex')}`).expect(201);
      await signupAgent(`quota-${randomBytes(3).toString('hex')}`).expect(201);
      const limited = await signupAgent(`quota-${randomBytes(3).toString('hex')}`).expect(429);
      expect(limited.headers['ratelimit-policy']).toBe('"signup";q=2;w=3600');
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    } finally {
      await t.close();
    }
  });

  it('Console signups spend the signup quota; login attempts have a per-address quota', async () => {
    const t = await startApp({ RATE_LIMIT_SIGNUPS_PER_HOUR: '1', RATE_LIMIT_LOGIN_ATTEMPTS_PER_MINUTE: '2' });
    try {
      const account = await signup(t);
      const again = await t
        .http()
        .post('/api/v1/console/signup')
        .send({ organization_name: 'X', email: `${randomBytes(4).toString('hex')}@example.test`, password: PASSWORD });
      expect(again.status).toBe(429);
      expect(again.headers['ratelimit-policy']).toBe('"signup";q=1;w=3600');
      // Different emails each time: the per-(email, address) failure count never trips, the address quota does.
      for (const email of ['a@example.test', 'b@example.test']) {
        await t.http().post('/api/v1/console/login').send({ email, password: 'wrong password!!' }).expect(401);
      }
      const limited = await t
        .http()
        .post('/api/v1/console/login')
        .send({ email: account.email, password: PASSWORD })
        .expect(429);
      expect(limited.headers['ratelimit-policy']).toBe('"login_attempts";q=2;w=60');
    } finally {
      await t.close();
    }
  });

  /** 25 wrong passwords at once against a limit of 10: the attempts are reserved before bcrypt runs. */
  async function racingLogins(t: TestApp): Promise<number[]> {
    const account = await signup(t);
    const attempts = Array.from({ length: 25 }, () =>
      t.http().post('/api/v1/console/login').send({ email: account.email, password: 'wrong password!!' }),
    );
    const statuses = (await Promise.all(attempts)).map((res) => res.status);
    return [statuses.filter((s) => s === 401).length, statuses.filter((s) => s === 429).length];
  }

  it('concurrent wrong passwords: only the limit is tried, the rest are refused before bcrypt (in memory)', async () => {
    const t = await startApp();
    try {
      expect(await racingLogins(t)).toEqual([10, 15]);
    } finally {
      await t.close();
    }
  });

  describe('shared through Redis (REDIS_URL)', () => {
    const redisEnv = () => ({
      REDIS_URL: 'redis://127.0.0.1:6379',
      REDIS_KEY_PREFIX: `a2a-test-${randomBytes(4).toString('hex')}:`,
    });

    it('two instances draw on one budget', async () => {
      const env = { ...redisEnv(), RATE_LIMIT_PUBLIC_PER_MINUTE: '3' };
      const [a, b] = [await startApp(env), await startApp(env)];
      try {
        await a.http().get('/healthz').expect(200);
        await b.http().get('/healthz').expect(200);
        await a.http().get('/healthz').expect(200);
        await b.http().get('/healthz').expect(429);
        await a.http().get('/healthz').expect(429);
      } finally {
        await a.close();
        await b.close();
      }
    });

    it('concurrent wrong passwords: only the limit is tried (Redis)', async () => {
      const t = await startApp(redisEnv());
      try {
        expect(await racingLogins(t)).toEqual([10, 15]);
      } finally {
        await t.close();
      }
    });

    it('login failures through one instance lock the account on the other', async () => {
      const env = { ...redisEnv(), LOGIN_FAILURE_LIMIT: '2' };
      const [a, b] = [await startApp(env), await startApp(env)];
      try {
        const account = await signup(a);
        await b
          .http()
          .post('/api/v1/console/signup')
          .send({ organization_name: 'B', email: account.email, password: PASSWORD });
        const login = (t: TestApp, password: string) =>
          t.http().post('/api/v1/console/login').send({ email: account.email, password });
        await login(a, 'wrong password!!').expect(401);
        await login(b, 'wrong password!!').expect(401);
        const locked = await login(a, PASSWORD).expect(429);
        expect(locked.headers['ratelimit-policy']).toBe('"login";q=2;w=900');
      } finally {
        await a.close();
        await b.close();
      }
    });
  });

  it('falls back to per-instance memory when Redis is unreachable from the start (limits stay on)', async () => {
    const t = await startApp({ REDIS_URL: `redis://127.0.0.1:${await freePort()}`, RATE_LIMIT_PUBLIC_PER_MINUTE: '1' });
    try {
      await t.http().get('/healthz').expect(200);
      await t.http().get('/healthz').expect(429);
    } finally {
      await t.close();
    }
  });

  it('Redis going away: limits count in memory, /readyz says so, and Redis is used again once it is back', async () => {
    const port = await freePort();
    const startRedis = async () => {
      const child = spawn(
        'redis-server',
        ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
        { stdio: 'ignore' },
      );
      const ping = async () =>
        new Promise<boolean>((resolve) => {
          const socket = connect(port, '127.0.0.1', () => {
            socket.destroy();
            resolve(true);
          });
          socket.on('error', () => resolve(false));
        });
      await eventually(ping, (up) => up);
      return child;
    };
    const stopRedis = (child: ChildProcess) =>
      new Promise((resolve) => {
        child.once('exit', resolve);
        child.kill('SIGKILL');
      });
    let redis = await startRedis();
    const t = await startApp({ REDIS_URL: `redis://127.0.0.1:${port}`, RATE_LIMIT_REST_PER_MINUTE: '3' });
    try {
      const key = await mintAdminKey(t, await signup(t));
      const self = () => t.http().get('/api-keys/self').set(apiKey(key));
      const readyz = async () => (await t.http().get('/readyz').expect(200)).body;
      expect(await readyz()).toMatchObject({ status: 'ready', components: { redis: 'healthy' } });
      await self().expect(200); // counted in Redis

      await stopRedis(redis);
      expect(await eventually(readyz, (body) => body.components.redis === 'unhealthy')).toMatchObject({
        status: 'ready',
      });
      // Counted in this instance's memory meanwhile: the limit still holds.
      for (let i = 0; i < 3; i++) {
        await self().expect(200);
      }
      await self().expect(429);

      redis = await startRedis(); // a fresh, empty Redis
      await eventually(readyz, (body) => body.components.redis === 'healthy');
      await self().expect(200); // counted in Redis again, where this key has a fresh budget
    } finally {
      await t.close();
      await stopRedis(redis);
    }
  });
});
