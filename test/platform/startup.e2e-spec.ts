import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { createTestDatabase, dropDatabase, serverUrl, urlFor } from '../support/database';
import { freePort, runScript, startServerProcess, type ServerProcess } from '../support/server-process';

/** What a person sees when starting the service, run as real processes. */
describe('starting the server', () => {
  let database: string;
  let server: ServerProcess | undefined;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });
  afterAll(async () => {
    await dropDatabase(database);
  });

  it('prints one line at info: where it listens, the Console and API docs URLs, the database — never its password', async () => {
    const password = `pw-${randomBytes(6).toString('hex')}`; // the test server trusts, so any password connects
    const url = new URL(urlFor(database));
    url.password = password;
    server = await startServerProcess({
      DATABASE_URL: url.toString(),
      LOG_LEVEL: 'info',
      PUBLIC_BASE_URL: 'https://a2a.example.test',
    });
    expect(await server.stop()).toBe(0);
    const output = server.output();
    expect(output).not.toContain(password);
    const lines = output
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line));
    const startup = lines.filter((line) => line.level === 30 && line.msg !== 'request' && line.msg !== 'shutting down');
    expect(startup).toHaveLength(1);
    const port = new URL(server.baseUrl).port;
    expect(startup[0].msg).toBe(
      `listening on http://127.0.0.1:${port} — Console https://a2a.example.test/console/ — API docs https://a2a.example.test/api/docs` +
        ` — database: PostgreSQL ${url.hostname}:${url.port}/${database}`,
    );
  });

  it('names the embedded database by its path', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'a2a-startup-'));
    try {
      server = await startServerProcess({ DATA_DIR: dataDir, LOG_LEVEL: 'info' });
      await server.stop();
      const startup = server
        .output()
        .split('\n')
        .filter((line) => line.includes('"listening on'));
      expect(startup).toHaveLength(1);
      expect(JSON.parse(startup[0]).database).toBe(`embedded (${dataDir})`);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('stops at once with one line when DATABASE_URL names a database that does not exist', async () => {
    const missing = `a2a_missing_${randomBytes(4).toString('hex')}`;
    const { host, port } = new URL(serverUrl());
    const { code, output } = await runScript('src/main.ts', [], { DATABASE_URL: urlFor(missing), LOG_LEVEL: 'info' });
    expect(code).toBe(1);
    expect(output.trim().split('\n')).toEqual([
      `failed to start: database ${missing} does not exist on ${host.split(':')[0]}:${port || 5432} — create it with: createdb -h ${host.split(':')[0]} -p ${port || 5432} -U ${new URL(serverUrl()).username || 'postgres'} ${missing}`,
    ]);
  });

  it('npm run worker says the same in one line', async () => {
    const missing = `a2a_missing_${randomBytes(4).toString('hex')}`;
    const { code, output } = await runScript('src/worker.ts', [], { DATABASE_URL: urlFor(missing), LOG_LEVEL: 'info' });
    expect(code).toBe(1);
    expect(output.trim().split('\n')).toEqual([
      expect.stringMatching(
        new RegExp(`^failed to start: database ${missing} does not exist on .+ — create it with: createdb `),
      ),
    ]);
  });

  it('stops at once with one line when PostgreSQL cannot be reached', async () => {
    const port = await freePort(); // nothing listens there
    const { code, output } = await runScript('src/main.ts', [], {
      DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/a2a`,
      LOG_LEVEL: 'info',
    });
    expect(code).toBe(1);
    expect(output.trim().split('\n')).toEqual([
      `failed to start: cannot reach PostgreSQL at 127.0.0.1:${port} (ECONNREFUSED) — is it running, and is DATABASE_URL right?`,
    ]);
  });
});

/** `npm run cli -- bootstrap` on the embedded database: never beside a running server. */
describe('npm run cli -- bootstrap on the embedded database', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'a2a-cli-'));
  let server: ServerProcess | undefined;
  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  const bootstrap = (email: string) =>
    runScript('src/cli.ts', ['bootstrap', '--org', 'Acme', '--email', email], { DATA_DIR: dataDir });

  it('refuses while a server runs on it, and works once the server is stopped', async () => {
    server = await startServerProcess({ DATA_DIR: dataDir });
    const refused = await bootstrap('first@acme.test');
    expect(refused.code).toBe(2);
    expect(refused.output.trim().split('\n')).toEqual([
      expect.stringMatching(
        /^the embedded database at .+ is in use by another process \(pid \d+\), most likely a running server: stop it/,
      ),
    ]);
    // Nothing was written: the running server does not know the email.
    await request(server.baseUrl)
      .post('/api/v1/console/login')
      .send({ email: 'first@acme.test', password: 'x'.repeat(12) })
      .expect(401);
    expect(await server.stop()).toBe(0);

    const created = await bootstrap('first@acme.test');
    expect(created.code).toBe(0);
    const key = /admin key:\s+(\S+)/.exec(created.output)![1];

    server = await startServerProcess({ DATA_DIR: dataDir });
    expect((await request(server.baseUrl).get('/api-keys/self').set('X-API-Key', key).expect(200)).body).toMatchObject({
      scope: 'admin',
    });
  });

  it('a second server on the same directory is refused too', async () => {
    server = await startServerProcess({ DATA_DIR: dataDir });
    const second = await runScript('src/main.ts', [], { DATA_DIR: dataDir, PORT: String(await freePort()) });
    expect(second.code).toBe(1);
    expect(second.output).toMatch(
      /^failed to start: the embedded database at .+ is in use by another process \(pid \d+\)\n$/,
    );
  });
});
