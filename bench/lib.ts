import 'reflect-metadata';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DataSource } from 'typeorm';
import { createApp } from '../src/app.factory';
import { loadConfig } from '../src/config/config';
import { dataSourceOptions } from '../src/database/data-source';
import { dropDatabase, urlFor, withServer } from '../test/support/database';

const run = promisify(execFile);

/**
 * Shared benchmark plumbing: a server on a fresh, migrated PostgreSQL database,
 * autocannon runs, and percentile helpers. Benchmarks print figures; they assert
 * nothing.
 */
export interface BenchServer {
  app: NestExpressApplication;
  db: DataSource;
  baseUrl: string;
  close: () => Promise<void>;
}

/** The server settings every bench server shares: quotas off, no gRPC, metrics off, silent logs. */
const BENCH_ENV = {
  LOG_LEVEL: 'silent',
  // Benchmarks measure the service, not its quotas.
  RATE_LIMIT_PROTOCOL_PER_MINUTE: '10000000',
  RATE_LIMIT_REST_PER_MINUTE: '10000000',
  RATE_LIMIT_PUBLIC_PER_MINUTE: '10000000',
  GRPC_PORT: 'off',
  // Metrics and tracing are measured on and off by bench/observability.bench.ts.
  METRICS_PORT: 'off',
};

/**
 * A server on a fresh, migrated PostgreSQL database; with BENCH_DATABASE=embedded, on
 * the embedded default (PGlite in a fresh temporary DATA_DIR), as `npm start` runs
 * without DATABASE_URL.
 */
export async function startBenchServer(env: Record<string, string> = {}): Promise<BenchServer> {
  if (process.env.BENCH_DATABASE === 'embedded') {
    const dataDir = mkdtempSync(join(tmpdir(), 'a2a-bench-'));
    return serve({ ...BENCH_ENV, DATA_DIR: dataDir, ...env }, () => rmSync(dataDir, { recursive: true, force: true }));
  }
  const database = `a2a_bench_${process.pid}_${Date.now()}`;
  await withServer((c) => c.query(`CREATE DATABASE "${database}"`));
  const migrate = await new DataSource(dataSourceOptions({ databaseUrl: urlFor(database), dataDir: '' })).initialize();
  await migrate.runMigrations({ transaction: 'each' });
  await migrate.destroy();
  return serve({ ...BENCH_ENV, DATABASE_URL: urlFor(database), MIGRATIONS_RUN: 'false', ...env }, () =>
    dropDatabase(database),
  );
}

/** The app on a free loopback port; `cleanUp` runs once it has closed. */
async function serve(env: Record<string, string>, cleanUp: () => Promise<void> | void): Promise<BenchServer> {
  const app = await createApp(loadConfig(env), pino({ level: 'silent' }));
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as { port: number };
  return {
    app,
    db: app.get(DataSource),
    baseUrl: `http://127.0.0.1:${port}`,
    close: async () => {
      await app.close();
      await cleanUp();
    },
  };
}

export interface LoadResult {
  name: string;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
}

/**
 * Drives a URL with autocannon in its own process, so the load generator never
 * competes with the server for its event loop.
 */
export async function load(
  name: string,
  options: {
    url: string;
    connections?: number;
    duration?: number;
    method?: 'GET' | 'POST';
    headers?: Record<string, string>;
    body?: string;
    /** Replace each `[<id>]` in the body with a fresh random id per request. */
    idReplacement?: boolean;
  },
): Promise<LoadResult> {
  const args = [
    require.resolve('autocannon/autocannon.js'),
    '--json',
    '-c',
    String(options.connections ?? 50),
    '-d',
    String(options.duration ?? 10),
    '-m',
    options.method ?? 'GET',
    ...Object.entries(options.headers ?? {}).flatMap(([k, v]) => ['-H', `${k}=${v}`]),
    ...(options.body ? ['-b', options.body] : []),
    ...(options.idReplacement ? ['-I'] : []),
    options.url,
  ];
  const { stdout } = await run(process.execPath, args, { maxBuffer: 64 * 1024 * 1024 });
  const result = JSON.parse(stdout) as {
    requests: { average: number };
    latency: { p50: number; p99: number };
    errors: number;
    timeouts: number;
    non2xx: number;
  };
  return {
    name,
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
  };
}

export function percentile(sortedMs: number[], p: number): number {
  if (sortedMs.length === 0) {
    return NaN;
  }
  return sortedMs[Math.min(sortedMs.length - 1, Math.ceil((p / 100) * sortedMs.length) - 1)];
}

/** Units of work of one side before the order flips (`inTurns`). */
export const TURN = 25;

/**
 * `units` units of work for each of `sides`, in turns of `turn` units each side, the
 * order flipped every turn (A B | B A | A B …, so mid-run a side goes twice in a row):
 * drift on a shared machine falls on every side alike. Rounds of a load test are turns
 * of 1; an even number of them puts every side as often first as last.
 */
export async function inTurns<S extends string>(
  units: number,
  sides: readonly S[],
  work: (side: S, count: number) => Promise<void>,
  turn = TURN,
): Promise<void> {
  for (let done = 0, flip = false; done < units; done += turn, flip = !flip) {
    const count = Math.min(turn, units - done);
    for (const side of flip ? [...sides].reverse() : sides) {
      await work(side, count);
    }
  }
}

/** `fn` `times` times, one after the other. */
export async function repeat(times: number, fn: () => Promise<unknown>): Promise<void> {
  for (let i = 0; i < times; i++) {
    await fn();
  }
}

export interface Timing {
  p50: number;
  p95: number;
  p99: number;
  mean: number;
}

/** Times `fn` `iterations` times (after up to 50 untimed calls: JIT and caches warm) and returns p50/p99 in ms. */
export async function timeIt(iterations: number, fn: () => Promise<unknown>): Promise<Timing> {
  return timeEach(iterations, () => fn());
}

/**
 * Times `fn(i)` for `iterations` values of i (after up to 50 untimed ones: JIT and caches
 * warm), each its fastest of `bestOf` runs in a row: with `bestOf` above 1, what each
 * request costs with the machine's hiccups (another process's turn, a GC pause) left out.
 */
export async function timeEach(iterations: number, fn: (i: number) => Promise<unknown>, bestOf = 1): Promise<Timing> {
  let i = 0;
  await repeat(Math.min(50, iterations), () => fn(i++));
  const samples: number[] = [];
  for (let n = 0; n < iterations; n++, i++) {
    let fastest = Infinity;
    for (let run = 0; run < bestOf; run++) {
      fastest = Math.min(fastest, await elapsedMs(() => fn(i)));
    }
    samples.push(fastest);
  }
  return timing(samples);
}

/**
 * Stream round trips (stream → reply → completed) to run against each server before any
 * is timed: V8's TurboFan optimizes the path over the first thousands of them, most of
 * the gain within ~1,000 (BENCHMARKS.md, "The round trip measured warm"), and a steady
 * service runs it warm. BENCH_WARM_UP.
 */
export const ROUND_TRIP_WARM_UP = Number(process.env.BENCH_WARM_UP ?? 1000);

/**
 * `timeIt` for several sides at once, in turns (`inTurns`), after `warmUps` untimed
 * calls of each side (50 by default) that go in the same turns.
 */
export async function timeInTurns<S extends string>(
  iterations: number,
  fns: Record<S, () => Promise<unknown>>,
  warmUps = 50,
): Promise<Record<S, Timing>> {
  const sides = Object.keys(fns) as S[];
  await inTurns(warmUps, sides, (side, count) => repeat(count, fns[side]));
  const samples = Object.fromEntries(sides.map((side) => [side, [] as number[]])) as Record<S, number[]>;
  await inTurns(iterations, sides, async (side, count) => {
    for (let i = 0; i < count; i++) {
      samples[side].push(await elapsedMs(fns[side]));
    }
  });
  return Object.fromEntries(sides.map((side) => [side, timing(samples[side])])) as Record<S, Timing>;
}

async function elapsedMs(fn: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

function timing(samples: number[]): Timing {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    mean: sorted.reduce((a, b) => a + b, 0) / sorted.length,
  };
}

export function machine(): string {
  return `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
}

export function table(rows: Array<Record<string, string | number>>): void {
  const format = (v: string | number) => (typeof v === 'number' ? (Number.isInteger(v) ? String(v) : v.toFixed(2)) : v);
  const headers = Object.keys(rows[0] ?? {});
  const widths = headers.map((h) => Math.max(h.length, ...rows.map((r) => format(r[h]).length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  console.log(line(headers));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const row of rows) {
    console.log(line(headers.map((h) => format(row[h]))));
  }
}

/**
 * CPU time (user + system, ms) used so far by the process `pid`, or by every
 * PostgreSQL process of this machine when `pid` is 'postgres' — from /proc (Linux;
 * 0 elsewhere). A figure per request that moves less with a noisy machine than
 * requests per second do.
 */
export function cpuTimeMs(pid: number | 'postgres'): number {
  const ticks = (stat: string) => {
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10; // utime + stime, in clock ticks of 10 ms
  };
  const read = (id: string) => {
    try {
      return readFileSync(`/proc/${id}/stat`, 'utf8');
    } catch {
      return null; // gone, or no /proc
    }
  };
  if (pid !== 'postgres') {
    const stat = read(String(pid));
    return stat ? ticks(stat) : 0;
  }
  let total = 0;
  for (const id of existsSync('/proc') ? readdirSync('/proc') : []) {
    if (!/^\d+$/.test(id)) {
      continue;
    }
    const stat = read(id);
    if (stat?.includes('(postgres)')) {
      total += ticks(stat);
    }
  }
  return total;
}
