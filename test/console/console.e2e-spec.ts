import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import * as bcrypt from 'bcrypt';
import { randomBytes } from 'node:crypto';
import { ConsoleRepository } from '../../src/console/console.repository';
import { Database } from '../../src/database/database';
import { startApp, type TestApp } from '../support/app';
import { apiKey, bearer, PASSWORD, signup, unique, type ConsoleAccount } from '../support/fixtures';

const run = promisify(execFile);

describe('Console accounts and sessions', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ LOGIN_FAILURE_LIMIT: '3' });
  });
  afterAll(() => t.close());

  it('signup creates an organization and a user and returns a session', async () => {
    const email = `${unique('founder')}@example.test`;
    const res = await t
      .http()
      .post('/api/v1/console/signup')
      .send({ organization_name: 'Acme', email, password: PASSWORD })
      .expect(201);
    expect(res.body).toMatchObject({
      token: expect.stringMatching(/^a2a_ses_/),
      expires_at: expect.any(String),
      user: { email, organization_id: res.body.organization.id },
      organization: { name: 'Acme' },
    });
    expect(res.body.user).not.toHaveProperty('password_hash');
    const hoursValid = (Date.parse(res.body.expires_at) - Date.now()) / 3600_000;
    expect(hoursValid).toBeGreaterThan(11.9);
    expect(hoursValid).toBeLessThanOrEqual(12);
    const cookie = res.headers['set-cookie'][0] as string;
    expect(cookie).toMatch(/^a2a_session=a2a_ses_/);
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
  });

  it('signup creates the user and opens its session in one transaction: a session that fails leaves no account', async () => {
    const email = `${unique('atomic')}@example.test`;
    const spy = jest
      .spyOn(ConsoleRepository.prototype, 'openSession')
      .mockRejectedValueOnce(new Error('the session could not be stored'));
    try {
      await t
        .http()
        .post('/api/v1/console/signup')
        .send({ organization_name: 'Atomic', email, password: PASSWORD })
        .expect(500);
    } finally {
      spy.mockRestore();
    }
    expect(await t.db.query(`SELECT id FROM console_users WHERE email = $1`, [email])).toEqual([]);
    await t
      .http()
      .post('/api/v1/console/signup')
      .send({ organization_name: 'Atomic', email, password: PASSWORD })
      .expect(201);
  });

  it('stores the password with bcrypt (cost 12) and the session token only as a hash', async () => {
    const account = await signup(t);
    const [user] = await t.db.query(`SELECT password_hash FROM console_users WHERE id = $1`, [account.userId]);
    expect(user.password_hash).toMatch(/^\$2[aby]\$12\$/);
    const sessions = await t.db.query(
      `SELECT token_hash FROM console_sessions s JOIN console_users u ON u.id = s.user_id WHERE u.id = $1`,
      [account.userId],
    );
    expect(JSON.stringify(sessions)).not.toContain(account.token);
  });

  it.each([
    [{ organization_name: 'A', email: 'not-an-email', password: PASSWORD }, 'email'],
    [{ organization_name: 'A', email: 'a@example.test', password: 'short' }, 'password'],
    [{ organization_name: 'A', email: 'a@example.test', password: 'é'.repeat(40) }, 'password'],
    [{ organization_name: '', email: 'a@example.test', password: PASSWORD }, 'organization_name'],
    [{ email: 'a@example.test', password: PASSWORD }, 'organization_name'],
    [{ organization_name: 'A', email: 'a@example.test', password: PASSWORD, admin: true }, 'admin'],
  ])('signup refuses %j with a field error', async (body, field) => {
    const res = await t.http().post('/api/v1/console/signup').send(body).expect(400);
    expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
  });

  it('a second signup with the same email (any case) → 409', async () => {
    const account = await signup(t);
    const res = await t
      .http()
      .post('/api/v1/console/signup')
      .send({ organization_name: 'Again', email: account.email.toUpperCase(), password: PASSWORD })
      .expect(409);
    expect(res.body.code).toBe('email_taken');
  });

  it('login returns a new session; wrong email and wrong password give the same 401', async () => {
    const account = await signup(t);
    const ok = await t
      .http()
      .post('/api/v1/console/login')
      .send({ email: account.email, password: PASSWORD })
      .expect(200);
    expect(ok.body.token).not.toBe(account.token);
    expect(ok.body.organization.id).toBe(account.organizationId);
    const wrongPassword = await t
      .http()
      .post('/api/v1/console/login')
      .send({ email: account.email, password: 'wrong password!!' })
      .expect(401);
    const wrongEmail = await t
      .http()
      .post('/api/v1/console/login')
      .send({ email: 'nobody@example.test', password: PASSWORD })
      .expect(401);
    expect(wrongPassword.body.detail).toBe(wrongEmail.body.detail);
    expect(wrongPassword.body.code).toBe('invalid_credentials');
  });

  it('throttles repeated login failures with 429 and Retry-After, even for the right password', async () => {
    const account = await signup(t);
    for (let i = 0; i < 3; i++) {
      await t
        .http()
        .post('/api/v1/console/login')
        .send({ email: account.email, password: 'wrong password!!' })
        .expect(401);
    }
    const res = await t
      .http()
      .post('/api/v1/console/login')
      .send({ email: account.email, password: PASSWORD })
      .expect(429);
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expect(res.body.code).toBe('rate_limited');
  });

  describe('one email, however it is spelled: one account and one login throttle', () => {
    const signupAs = (email: string) =>
      t.http().post('/api/v1/console/signup').send({ organization_name: 'Spelled', email, password: PASSWORD });
    const login = (email: string, password = PASSWORD) =>
      t.http().post('/api/v1/console/login').send({ email, password });
    const failThrice = async (email: string) => {
      for (let i = 0; i < 3; i++) {
        await login(email, 'wrong password!!').expect(401);
      }
    };

    it('a dotted capital I (alİce) is another address: not alice’s account, and its own throttle bucket', async () => {
      const local = unique('alice');
      const email = `${local}@example.test`;
      await signupAs(email).expect(201);
      await failThrice(email);
      await login(email).expect(429);
      // JavaScript lowercases İ to i + U+0307 (PostgreSQL's lower() to i): the key says another address,
      // with no account, whose bucket alice's failures did not fill.
      const dotted = `${local.replace('i', 'İ')}@example.test`;
      for (const spelling of [dotted, dotted.toUpperCase()]) {
        const res = await login(spelling).expect(401);
        expect(res.body.code).toBe('invalid_credentials');
      }
    });

    it('case and Unicode normalization (NFC, NFD) of one address share the account and the bucket', async () => {
      const local = unique('josé');
      const email = `${local}@example.test`; // NFC: é is U+00E9
      await signupAs(email).expect(201);
      const nfd = email.normalize('NFD');
      expect(nfd).not.toBe(email);
      for (const variant of [nfd, email.toUpperCase(), nfd.toUpperCase()]) {
        await login(variant).expect(200);
        const taken = await signupAs(variant).expect(409);
        expect(taken.body.code).toBe('email_taken');
      }
      await failThrice(nfd.toUpperCase());
      await login(email).expect(429);
      await login(nfd).expect(429);
    });
  });

  describe('a password change ends every session opened under the old password', () => {
    const NEW_PASSWORD = 'a brand new passphrase';
    const liveSessions = async (account: ConsoleAccount) =>
      (
        await t.db.query(`SELECT count(*)::int AS n FROM console_sessions WHERE user_id = $1 AND revoked_at IS NULL`, [
          account.userId,
        ])
      )[0].n as number;
    const passwordHash = async (account: ConsoleAccount) =>
      (await t.db.query(`SELECT password_hash FROM console_users WHERE id = $1`, [account.userId]))[0]
        .password_hash as string;

    it('a login that verified the old password before the change opens no session after it', async () => {
      const account = await signup(t);
      const lookup = ConsoleRepository.prototype.userWithPassword;
      // The login pauses between reading the hash (and so verifying against it) and opening its session.
      let paused!: () => void;
      const reached = new Promise<void>((resolve) => (paused = resolve));
      let resume!: () => void;
      const gate = new Promise<void>((resolve) => (resume = resolve));
      const spy = jest.spyOn(ConsoleRepository.prototype, 'userWithPassword').mockImplementation(async function (
        this: ConsoleRepository,
        by,
      ) {
        const user = await lookup.call(this, by);
        if ('email' in by) {
          paused();
          await gate;
        }
        return user;
      });
      try {
        const login = t.http().post('/api/v1/console/login').send({ email: account.email, password: PASSWORD });
        const answered = login.then((res) => res);
        await reached;
        await t
          .http()
          .post('/api/v1/console/password')
          .set(bearer(account))
          .send({ current_password: PASSWORD, new_password: NEW_PASSWORD })
          .expect(204);
        resume();
        const res = await answered;
        expect({ status: res.status, code: res.body.code }).toEqual({ status: 401, code: 'invalid_credentials' });
      } finally {
        spy.mockRestore();
      }
      // Only the session that changed the password is live.
      expect(await liveSessions(account)).toBe(1);
      await t.http().post('/api/v1/console/login').send({ email: account.email, password: NEW_PASSWORD }).expect(200);
    });

    it('a session opened under the old password while the change is uncommitted waits for it, then opens nothing', async () => {
      const account = await signup(t);
      const repository = t.app.get(ConsoleRepository);
      const oldHash = await passwordHash(account);
      const newHash = await bcrypt.hash(NEW_PASSWORD, 4);
      const open = () =>
        repository.openSession({
          userId: account.userId,
          passwordHash: oldHash,
          tokenHash: randomBytes(32),
          expiresAt: new Date(Date.now() + 3600_000),
        });
      let opened: Promise<boolean> | undefined;
      let waited = false;
      await t.app.get(Database).transaction(async (tx) => {
        await repository.setPassword(account.userId, newHash, tx);
        opened = open();
        // The login's statement waits on the user's row, locked by the change.
        for (let i = 0; i < 100; i++) {
          const [{ waiting }] = await t.db.query(
            `SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
          );
          if ((waited = waiting > 0)) {
            break;
          }
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        await repository.revokeOtherSessions(account.userId, '00000000-0000-4000-8000-000000000000', tx);
      });
      expect(waited).toBe(true);
      expect(await opened).toBe(false);
      expect(await liveSessions(account)).toBe(0);
      // With the old hash, now committed over, it does not open either.
      expect(await open()).toBe(false);
    });
  });

  it('me and logout; a logged-out token is refused', async () => {
    const account = await signup(t, 'Me Inc');
    const me = await t.http().get('/api/v1/console/me').set(bearer(account)).expect(200);
    expect(me.body).toMatchObject({
      user: { id: account.userId },
      organization: { id: account.organizationId, name: 'Me Inc' },
    });
    await t.http().post('/api/v1/console/logout').set(bearer(account)).expect(204);
    const after = await t.http().get('/api/v1/console/me').set(bearer(account)).expect(401);
    expect(after.body.code).toBe('invalid_session');
  });

  it('an expired session is refused', async () => {
    const account = await signup(t);
    await t.db.query(`UPDATE console_sessions SET expires_at = now() - interval '1 second' WHERE user_id = $1`, [
      account.userId,
    ]);
    await t.http().get('/api/v1/console/me').set(bearer(account)).expect(401);
  });

  describe('cookie sessions', () => {
    it('authenticate reads with the cookie', async () => {
      const account = await signup(t);
      await t.http().get('/api/v1/console/me').set('Cookie', `a2a_session=${account.token}`).expect(200);
    });

    it('refuse unsafe requests without the Console origin (CSRF)', async () => {
      const account = await signup(t);
      const cookie = `a2a_session=${account.token}`;
      const none = await t.http().post('/api/v1/api-keys').set('Cookie', cookie).send({ scope: 'admin' }).expect(403);
      expect(none.body.code).toBe('csrf_failed');
      await t
        .http()
        .post('/api/v1/api-keys')
        .set('Cookie', cookie)
        .set('Origin', 'https://evil.example')
        .send({ scope: 'admin' })
        .expect(403);
      await t
        .http()
        .post('/api/v1/api-keys')
        .set('Cookie', cookie)
        .set('Origin', t.config.publicBaseUrl)
        .send({ scope: 'admin' })
        .expect(201);
    });

    it('an invalid X-API-Key is a 401 even with a valid bearer session (no fallback, docs/api.md §1)', async () => {
      const account = await signup(t);
      const res = await t
        .http()
        .get('/api/v1/console/me')
        .set(bearer(account))
        .set(apiKey('a2a_adm_nonsense'))
        .expect(401);
      expect(res.body.code).toBe('invalid_api_key');
    });

    it('an X-API-Key header wins over a cookie, with no fallback when invalid', async () => {
      const account = await signup(t);
      await t
        .http()
        .get('/api/v1/console/me')
        .set('Cookie', `a2a_session=${account.token}`)
        .set(apiKey('a2a_adm_nonsense'))
        .expect(401);
    });
  });

  it('signup can be closed by configuration', async () => {
    const closed = await startApp({ CONSOLE_SIGNUP: 'closed' });
    try {
      const res = await closed
        .http()
        .post('/api/v1/console/signup')
        .send({ organization_name: 'X', email: `${unique('x')}@example.test`, password: PASSWORD })
        .expect(403);
      expect(res.body.code).toBe('signup_closed');
    } finally {
      await closed.close();
    }
  });

  it('the bootstrap CLI creates an organization, a user and an admin key, printed once', async () => {
    const email = `${unique('ops')}@example.test`;
    const { stdout } = await run(
      process.execPath,
      ['-r', 'ts-node/register/transpile-only', 'src/cli.ts', 'bootstrap', '--org', 'Ops', '--email', email],
      { env: { ...process.env, DATABASE_URL: t.config.databaseUrl!, LOG_LEVEL: 'silent' }, timeout: 60_000 },
    );
    const key = /admin key:\s+(\S+)/.exec(stdout)![1];
    const password = /password:\s+(\S+)/.exec(stdout)![1];
    const self = await t.http().get('/api-keys/self').set(apiKey(key)).expect(200);
    expect(self.body).toMatchObject({ scope: 'admin', label: 'bootstrap' });
    const login = await t.http().post('/api/v1/console/login').send({ email, password }).expect(200);
    expect(login.body.organization).toMatchObject({ name: 'Ops', id: self.body.organization_id });
  });
});
