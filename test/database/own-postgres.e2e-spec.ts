import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from 'pg';
import { serverUrl } from '../support/database';
import { eventually } from '../support/eventually';
import { isAlive, RECORDS, removeLeftovers, startOwnPostgres } from '../support/own-postgres';
import { freePort } from '../support/server-process';
import { chooseTestServer } from '../support/test-server';

const ROOT = resolve(__dirname, '../..');

async function show(url: string, setting: string): Promise<string> {
  const client = new Client({ connectionString: `${url}/postgres` });
  await client.connect();
  try {
    return (await client.query<Record<string, string>>(`SHOW ${setting}`)).rows[0][setting];
  } finally {
    await client.end();
  }
}

/** `npm test` on a machine without PostgreSQL: the run starts a server of its own (test/support/own-postgres.ts). */
describe("The test run's own PostgreSQL", () => {
  it('is chosen when nothing answers at the default address, or when TEST_DATABASE=embedded', async () => {
    // A port on which nothing listens (bound, then closed).
    const nowhere = `postgres://postgres@127.0.0.1:${await freePort()}`;
    expect(await chooseTestServer({}, nowhere)).toEqual({
      kind: 'own',
      reason: expect.stringContaining('ECONNREFUSED') as string,
    });
    expect(await chooseTestServer({ TEST_DATABASE: 'embedded', TEST_DATABASE_SERVER: serverUrl() })).toEqual({
      kind: 'own',
      reason: 'TEST_DATABASE=embedded',
    });
    expect(await chooseTestServer({ TEST_DATABASE_SERVER: nowhere })).toEqual({ kind: 'given', url: nowhere });
    await expect(chooseTestServer({ TEST_DATABASE: 'pglite' })).rejects.toThrow(/only value is "embedded"/);
  });

  it('is the server this run uses when TEST_DATABASE=embedded', async () => {
    const dataDir = await show(serverUrl(), 'data_directory');
    if (process.env.TEST_DATABASE === 'embedded') {
      expect(dataDir).toBe(process.env.TEST_DATABASE_OWN_DIR);
      expect(dataDir.startsWith(tmpdir())).toBe(true);
    } else {
      expect(process.env.TEST_DATABASE_OWN_DIR === undefined || dataDir === process.env.TEST_DATABASE_OWN_DIR).toBe(
        true,
      );
    }
  });

  it('starts on a free port and a temporary directory, and stopped leaves nothing behind', async () => {
    const server = await startOwnPostgres();
    try {
      expect(server.port).not.toBe(5432);
      expect(await show(server.url, 'data_directory')).toBe(server.dataDir);
      expect(await show(server.url, 'port')).toBe(String(server.port));
      expect(await show(server.url, 'server_version')).toMatch(/^16\./);
      expect(existsSync(join(RECORDS, `${server.pid}.json`))).toBe(true);
    } finally {
      await server.stop();
    }
    expect(isAlive(server.pid)).toBe(false);
    expect(existsSync(server.dataDir)).toBe(false);
    expect(existsSync(join(RECORDS, `${server.pid}.json`))).toBe(false);
  });

  it.each(['SIGINT', 'SIGKILL'] as const)(
    'is stopped and removed when the run that started it ends by %s',
    async (signal) => {
      const child = spawn(
        process.execPath,
        [
          '-r',
          'ts-node/register/transpile-only',
          '-e',
          "require('./test/support/own-postgres').startOwnPostgres().then((s) => console.log(JSON.stringify(s)))" +
            '; setInterval(() => {}, 1000)',
        ],
        { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
      );
      const started = await new Promise<{ pid: number; dataDir: string; url: string }>((done, fail) => {
        let out = '';
        child.stdout.on('data', (chunk) => {
          out += chunk;
          if (out.includes('\n')) {
            done(JSON.parse(out) as { pid: number; dataDir: string; url: string });
          }
        });
        child.once('exit', (code) => fail(new Error(`the starting process exited with ${code}`)));
      });
      expect(await show(started.url, 'data_directory')).toBe(started.dataDir);
      child.kill(signal);
      const left = () => ({
        server: isAlive(started.pid),
        directory: existsSync(started.dataDir),
        record: existsSync(join(RECORDS, `${started.pid}.json`)),
      });
      await eventually(
        async () => left(),
        (what) => !what.server && !what.directory && !what.record,
        15_000,
      );
    },
    60_000,
  );

  it("removes what a dead run's record names, and leaves a live run's alone", () => {
    mkdirSync(RECORDS, { recursive: true });
    const dead = mkdtempSync(join(tmpdir(), 'a2a-test-pg-'));
    const live = mkdtempSync(join(tmpdir(), 'a2a-test-pg-'));
    // A pid no process has: above the kernel's usual pid_max.
    writeFileSync(
      join(RECORDS, 'test-dead.json'),
      JSON.stringify({ parent: 2 ** 22 + 7, pid: 2 ** 22 + 8, base: dead }),
    );
    writeFileSync(
      join(RECORDS, 'test-live.json'),
      JSON.stringify({ parent: process.pid, pid: 2 ** 22 + 9, base: live }),
    );
    removeLeftovers();
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(join(RECORDS, 'test-dead.json'))).toBe(false);
    expect(existsSync(live)).toBe(true);
    expect(existsSync(join(RECORDS, 'test-live.json'))).toBe(true);
    writeFileSync(
      join(RECORDS, 'test-live.json'),
      JSON.stringify({ parent: 2 ** 22 + 7, pid: 2 ** 22 + 9, base: live }),
    );
    removeLeftovers();
    expect(existsSync(live)).toBe(false);
  });
});
