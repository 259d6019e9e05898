import { EventEmitter } from 'node:events';
import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { Extension, PGlite } from '@electric-sql/pglite';

const PG_TRGM: string = '@electric-sql/pglite/contrib/pg_trgm';

/**
 * A `pg`-compatible driver over one embedded PGlite database, handed to TypeORM's
 * postgres driver through its `driver` option.
 *
 * PGlite is a single connection. TypeORM, like any pool user, may hold several
 * "connections" at once (two requests each running a transaction). If their
 * statements interleaved on the one real connection, a BEGIN from one request
 * would swallow the other's statements and transactions would stop being atomic.
 * So the pool hands out its one client to a single holder at a time: `connect()`
 * waits in a FIFO queue until the previous holder releases. Code must therefore
 * never wait on a second connection while holding one (always use the
 * transaction's EntityManager inside a transaction) — the same rule that keeps a
 * real pool from deadlocking when it is exhausted.
 */
type Callback<T> = (err: Error | null, value?: T) => void;

interface PgLikeResult {
  rows: unknown[];
  rowCount: number;
  command: string;
  fields: unknown[];
}

let shared: { dataDir: string; db: Promise<{ db: PGlite; unlock: () => void }>; users: number } | null = null;

/** A second process opening the same embedded database (a server, `npm run cli`) is refused. */
export class EmbeddedDatabaseInUseError extends Error {
  readonly code = 'embedded_database_in_use';
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(`the embedded database at ${dataDir} is in use by another process (pid ${pid})`);
  }
}

const LOCK_FILE = 'a2a-embedded.lock';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * PGlite is PostgreSQL in this process's memory, writing its files under DATA_DIR: two
 * processes on one directory would each believe they own it (and the second would not
 * see the first's writes). The first process to open it writes its pid to a lock file
 * there; another process finds a live pid and is refused. A lock left by a process that
 * died (or by this pid, as when a container restarts) is taken over.
 */
function lockDataDir(dataDir: string): () => void {
  const path = join(dataDir, LOCK_FILE);
  for (let attempt = 0; ; attempt += 1) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) {
        throw error;
      }
      const pid = Number.parseInt(readFileSync(path, 'utf8'), 10);
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid)) {
        throw new EmbeddedDatabaseInUseError(dataDir, pid);
      }
      unlinkSync(path);
    }
  }
  const release = () => {
    process.removeListener('exit', release);
    try {
      if (readFileSync(path, 'utf8') === String(process.pid)) {
        unlinkSync(path);
      }
    } catch {
      // already gone
    }
  };
  process.on('exit', release);
  return release;
}

async function openDatabase(dataDir: string): Promise<{ db: PGlite; unlock: () => void }> {
  mkdirSync(dataDir, { recursive: true });
  const unlock = lockDataDir(dataDir);
  try {
    // PGlite ships as ESM with a CommonJS build; load it lazily so servers on a real
    // PostgreSQL never pay for the WASM module.
    const { PGlite } = await import('@electric-sql/pglite');
    // pg_trgm: the directory's search for misspellings (migration 1796500000000-ranked-search).
    // A subpath export, which this project's module resolution does not type: typed here.
    const { pg_trgm } = (await import(PG_TRGM)) as { pg_trgm: Extension };
    return { db: await PGlite.create({ dataDir, extensions: { pg_trgm } }), unlock };
  } catch (error) {
    unlock();
    throw error;
  }
}

function commandOf(sql: string): string {
  const match = /^\s*(?:with\b[\s\S]*?\)\s*)?(\w+)/i.exec(sql);
  return match ? match[1].toUpperCase() : '';
}

class PgliteClient extends EventEmitter {
  constructor(private readonly db: PGlite) {
    super();
  }

  /** `pg`'s Client.query: a text with values (or a callback), or a config object (a name is ignored here). */
  async query(
    statement: string | { text: string; values?: unknown[] },
    params?: unknown[] | Callback<PgLikeResult>,
    cb?: Callback<PgLikeResult>,
  ): Promise<PgLikeResult> {
    const callback = typeof params === 'function' ? params : cb;
    const sql = typeof statement === 'string' ? statement : statement.text;
    const values = typeof statement === 'string' ? (Array.isArray(params) ? params : []) : (statement.values ?? []);
    try {
      let result: PgLikeResult;
      if (values.length > 0) {
        const r = await this.db.query(sql, values);
        result = { rows: r.rows, rowCount: r.affectedRows ?? r.rows.length, command: commandOf(sql), fields: r.fields };
      } else {
        // Without parameters, run as a simple query so multi-statement migrations work.
        const all = await this.db.exec(sql);
        const last = all[all.length - 1];
        result = {
          rows: last?.rows ?? [],
          rowCount: last?.affectedRows ?? last?.rows.length ?? 0,
          command: commandOf(sql),
          fields: last?.fields ?? [],
        };
      }
      callback?.(null, result);
      return result;
    } catch (error) {
      if (callback) {
        callback(error as Error);
        return undefined as never;
      }
      throw error;
    }
  }
}

export class PglitePool extends EventEmitter {
  private readonly waiting: Array<() => void> = [];
  private busy = false;
  private client: PgliteClient | null = null;
  private readonly dataDir: string;

  constructor(options: { dataDir?: string }) {
    super();
    if (!options.dataDir) {
      throw new Error('PglitePool needs a dataDir');
    }
    this.dataDir = options.dataDir;
    if (shared && shared.dataDir !== this.dataDir) {
      throw new Error(`an embedded database is already open at ${shared.dataDir}`);
    }
    shared ??= { dataDir: this.dataDir, db: openDatabase(this.dataDir), users: 0 };
    shared.users += 1;
  }

  private async acquire(): Promise<PgliteClient> {
    if (this.busy) {
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
    this.busy = true;
    try {
      this.client ??= new PgliteClient((await shared!.db).db);
      return this.client;
    } catch (error) {
      this.release();
      throw error;
    }
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) {
      next();
    } else {
      this.busy = false;
    }
  }

  connect(
    cb?: (err: Error | null, client?: PgliteClient, release?: (err?: unknown) => void) => void,
  ): Promise<PgliteClient> | void {
    const acquired = this.acquire();
    if (!cb) {
      return acquired;
    }
    acquired.then(
      (client) => {
        let released = false;
        cb(null, client, () => {
          if (released) {
            return;
          }
          released = true;
          this.release();
        });
      },
      (error: Error) => cb(error),
    );
  }

  /** `pg`'s Pool.query: a text with values, or a config object (a name is ignored here). */
  async query(sql: string | { text: string; values?: unknown[] }, params?: unknown[]): Promise<PgLikeResult> {
    const client = await this.acquire();
    try {
      return typeof sql === 'string' ? await client.query(sql, params) : await client.query(sql);
    } finally {
      this.release();
    }
  }

  end(cb?: (err?: Error | null) => void): Promise<void> {
    const closing = (async () => {
      if (!shared) {
        return;
      }
      shared.users -= 1;
      if (shared.users > 0) {
        return;
      }
      const opening = shared.db;
      shared = null;
      const { db, unlock } = await opening;
      try {
        await db.close();
      } finally {
        unlock();
      }
    })();
    if (cb) {
      closing.then(
        () => cb(null),
        (error: Error) => cb(error),
      );
    }
    return closing;
  }
}

/** The shape TypeORM's postgres driver expects in its `driver` option. */
export const pgliteDriver = { Pool: PglitePool };
