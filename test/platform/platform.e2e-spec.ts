import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Client } from 'pg';
import pino from 'pino';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { createApp } from '../../src/app.factory';
import { loadConfig } from '../../src/config/config';
import { createLogger } from '../../src/common/logger';
import { startApp, type TestApp } from '../support/app';
import { createTestDatabase, dropDatabase, urlFor } from '../support/database';
import { eventually } from '../support/eventually';
import { apiKey, bearer, mintAdminKey, PASSWORD, signup } from '../support/fixtures';
import { logLines } from '../support/log-entries';

const run = promisify(execFile);

describe('platform behaviour', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ BODY_LIMIT_BYTES: '2048' });
  });
  afterAll(() => t.close());

  describe('errors are problem+json with a stable code and the request id', () => {
    it('unknown route → 404', async () => {
      const res = await t.http().get('/no/such/route').expect(404);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body).toEqual({
        type: 'about:blank',
        title: 'Not Found',
        status: 404,
        detail: expect.any(String),
        code: 'not_found',
        request_id: res.headers['x-request-id'],
      });
    });

    it('malformed JSON → 400 malformed_json', async () => {
      const res = await t
        .http()
        .post('/api/v1/console/login')
        .set('Content-Type', 'application/json')
        .send('{"email": ')
        .expect(400);
      expect(res.body).toMatchObject({ code: 'malformed_json', status: 400 });
    });

    it('a body over the limit → 413', async () => {
      const res = await t
        .http()
        .post('/api/v1/console/login')
        .send({ email: 'a@example.test', password: 'x'.repeat(4096) })
        .expect(413);
      expect(res.body.code).toBe('payload_too_large');
    });

    it('a body that is not JSON → 415', async () => {
      const res = await t
        .http()
        .post('/api/v1/console/login')
        .set('Content-Type', 'text/plain')
        .send('email=a')
        .expect(415);
      expect(res.body.code).toBe('unsupported_media_type');
    });

    it.each([
      ['an array', '[1,2]'],
      ['a string', '"hello"'],
      ['null', 'null'],
      ['wrong types', '{"email": 5, "password": {"$gt": ""}}'],
      ['deep nesting', '{"email":' + '['.repeat(500) + ']'.repeat(500) + '}'],
    ])('%s as a body → 400, never 500', async (_, body) => {
      const res = await t.http().post('/api/v1/console/login').set('Content-Type', 'application/json').send(body);
      expect(res.status).toBe(400);
      expect(res.body.code).toEqual(expect.any(String));
    });

    it('a bad percent-encoding in the path → 400', async () => {
      const res = await t
        .http()
        .get('/api/v1/api-keys/%E0%A4%A')
        .set(bearer(await signup(t)))
        .expect(400);
      expect(res.body.code).toBe('bad_request');
    });

    it('no error body ever carries a stack trace', async () => {
      const res = await t.http().get('/api/v1/api-keys/%E0%A4%A').expect(400);
      expect(JSON.stringify(res.body)).not.toMatch(/at .*\.(ts|js):\d+/);
    });
  });

  describe('request ids', () => {
    it('every response carries X-Request-Id; a safe inbound one is kept', async () => {
      const generated = await t.http().get('/healthz').expect(200);
      expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      const kept = await t.http().get('/healthz').set('X-Request-Id', 'trace-abc-12345').expect(200);
      expect(kept.headers['x-request-id']).toBe('trace-abc-12345');
      const replaced = await t.http().get('/healthz').set('X-Request-Id', 'bad id with spaces').expect(200);
      expect(replaced.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    });
  });

  describe('operations', () => {
    it('healthz and readyz', async () => {
      expect((await t.http().get('/healthz').expect(200)).body).toEqual({ status: 'ok' });
      expect((await t.http().get('/readyz').expect(200)).body).toEqual({
        status: 'ready',
        components: { database: 'healthy', listener: 'healthy' },
      });
    });

    it('readyz is 503 while the LISTEN connection is down, and ready again once it is back', async () => {
      const name = t.database;
      const admin = new Client({ connectionString: urlFor('postgres') });
      await admin.connect();
      try {
        // Connections to this database are refused: the listener, cut off, cannot reconnect.
        await admin.query(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS false`);
        await admin.query(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND application_name = 'a2a-service-listener'`,
          [name],
        );
        const down = await eventually(
          async () => t.http().get('/readyz'),
          (res) => res.status === 503,
        );
        expect(down.body).toMatchObject({ status: 'not_ready', components: { listener: 'unhealthy' } });
      } finally {
        await admin.query(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS true`);
        await admin.end();
      }
      const up = await eventually(
        async () => t.http().get('/readyz'),
        (res) => res.status === 200,
      );
      expect(up.body).toEqual({ status: 'ready', components: { database: 'healthy', listener: 'healthy' } });
    });

    it('readyz is 503 while migrations are pending', async () => {
      const database = await createTestDatabase();
      const app = await createApp(
        loadConfig({ DATABASE_URL: urlFor(database), MIGRATIONS_RUN: 'false', LOG_LEVEL: 'silent', GRPC_PORT: 'off' }),
        pino({ level: 'silent' }),
      );
      try {
        await app.init();
        await app.get(DataSource).query(`DELETE FROM schema_migrations`);
        const res = await request(app.getHttpServer()).get('/readyz').expect(503);
        expect(res.body).toMatchObject({
          status: 'not_ready',
          reason: 'migrations_pending',
          components: { database: 'healthy' },
        });
      } finally {
        await app.close();
        await dropDatabase(database);
      }
    });

    it('OpenAPI documents every route with its credential', async () => {
      const res = await t.http().get('/api/openapi.json').expect(200);
      const doc = res.body;
      expect(doc.components.securitySchemes).toMatchObject({
        apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        consoleSession: { type: 'http', scheme: 'bearer' },
      });
      const mint = doc.paths['/api/v1/api-keys'].post;
      expect(mint.description).toMatch(/admin-scoped API key, Console session/);
      expect(mint['x-surface']).toBe('keyAdmin');
      for (const [path, operations] of Object.entries(
        doc.paths as Record<string, Record<string, { description?: string }>>,
      )) {
        for (const [method, operation] of Object.entries(operations)) {
          expect(`${method} ${path}: ${operation.description}`).toMatch(/Credential:/);
        }
      }
      await t.http().get('/api/docs').expect(200);
    });
  });

  describe('logs', () => {
    it('are JSON with the request id, and never contain keys, tokens or passwords', async () => {
      const lines: string[] = [];
      const database = await createTestDatabase();
      const config = loadConfig({
        DATABASE_URL: urlFor(database),
        MIGRATIONS_RUN: 'false',
        LOG_LEVEL: 'trace',
        GRPC_PORT: 'off',
      });
      const logger = createLogger('trace', logLines(lines));
      const app = await createApp(config, logger);
      try {
        await app.init();
        const http = () => request(app.getHttpServer());
        const signed = await http()
          .post('/api/v1/console/signup')
          .send({ organization_name: 'Logs', email: 'logs@example.test', password: PASSWORD })
          .expect(201);
        const minted = await http()
          .post('/api/v1/api-keys')
          .set({ Authorization: `Bearer ${signed.body.token}` })
          .send({ scope: 'admin' })
          .expect(201);
        await http()
          .get('/api-keys/self')
          .set(apiKey(minted.body.key))
          .set('Cookie', `a2a_session=${signed.body.token}`)
          .expect(200);
        await http().get('/api-keys/self').set(apiKey('a2a_adm_forgedkeyforgedkeyforgedkeyforgedke')).expect(401);
        const all = lines.join('\n');
        expect(all).not.toContain(minted.body.key);
        expect(all).not.toContain(signed.body.token);
        expect(all).not.toContain(PASSWORD);
        expect(all).not.toContain('forgedkey');
        const requestLines = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request');
        expect(requestLines.length).toBeGreaterThanOrEqual(4);
        for (const line of requestLines) {
          expect(line).toMatchObject({
            request_id: expect.any(String),
            status: expect.any(Number),
            duration_ms: expect.any(Number),
          });
        }
      } finally {
        await app.close();
        await dropDatabase(database);
      }
    });
  });

  describe('configuration', () => {
    it.each([
      [{ PORT: 'eighty' }, 'PORT'],
      [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
      [{ BCRYPT_COST: '4' }, 'BCRYPT_COST'],
      [{ MIGRATIONS_RUN: 'maybe' }, 'MIGRATIONS_RUN'],
      [{ PUBLIC_BASE_URL: 'not a url' }, 'PUBLIC_BASE_URL'],
    ])('%j stops the process with one line naming it', async (env, name) => {
      const result = await run(process.execPath, ['-r', 'ts-node/register/transpile-only', 'src/main.ts'], {
        env: { PATH: process.env.PATH, ...env },
        timeout: 30_000,
      }).then(
        () => null,
        (error: { code: number; stderr: string }) => error,
      );
      expect(result).not.toBeNull();
      expect(result!.code).toBe(1);
      expect(result!.stderr.trim().split('\n')).toHaveLength(1);
      expect(result!.stderr).toContain(`configuration error: ${name}`);
    });
  });

  it('an admin key authenticates repeatedly (sanity for the benchmark path)', async () => {
    const key = await mintAdminKey(t, await signup(t));
    for (let i = 0; i < 5; i++) {
      await t.http().get('/api-keys/self').set(apiKey(key)).expect(200);
    }
  });
});
