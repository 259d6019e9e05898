import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/**
 * Runs `start` on a port `freePort` found, for a server that must know its address before
 * it listens (PUBLIC_BASE_URL, a redirect URI registered at a provider). The port was free
 * when found, but another process may take it before `start` listens there: a start that
 * fails with EADDRINUSE runs again on another port. `start` stops what it started before it
 * throws.
 */
export async function onFreePort<T>(start: (port: number) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start(await freePort());
    } catch (error) {
      if (attempt === 3 || !String((error as Error)?.message ?? error).includes('EADDRINUSE')) {
        throw error;
      }
    }
  }
}

export interface ChildScript {
  process: ChildProcess;
  output: () => string;
  stop: (signal?: NodeJS.Signals) => Promise<number | null>;
}

export interface ServerProcess extends ChildScript {
  baseUrl: string;
}

/** Runs a TypeScript entry point (src/main.ts, src/worker.ts, src/cli.ts) in its own process, as its npm script would. */
function spawnScript(
  script: string,
  env: Record<string, string>,
  args: string[] = [],
  loader = 'ts-node/register/transpile-only',
): ChildScript {
  const child = spawn(process.execPath, ['-r', loader, script, ...args], {
    env: {
      PATH: process.env.PATH,
      LOG_LEVEL: 'warn',
      METRICS_PORT: 'off',
      DATABASE_PIPELINE: process.env.DATABASE_PIPELINE ?? '',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    process: child,
    output: () => output,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill(signal);
      }
      return exited;
    },
  };
}

/**
 * Runs an entry point to its end (`npm run cli -- …`, or a server that cannot start): its
 * exit code and output. One still running after a minute is killed (code null), so a
 * process that should have stopped fails its test instead of hanging the run.
 */
export async function runScript(
  script: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  const child = spawnScript(script, env, args);
  const closed = new Promise<number | null>((resolve) => child.process.on('close', (exitCode) => resolve(exitCode)));
  const deadline = setTimeout(() => child.process.kill('SIGKILL'), 50_000);
  const code = await closed;
  clearTimeout(deadline);
  return { code, output: child.output() };
}

/** Polls `ready` until it holds; kills the child and fails if it exits or takes longer than a minute. */
async function waitUntil(child: ChildScript, ready: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await ready())) {
    if (child.process.exitCode !== null) {
      throw new Error(`${what} exited early: ${child.output()}`);
    }
    if (Date.now() > deadline) {
      child.process.kill('SIGKILL');
      throw new Error(`${what} did not start: ${child.output()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Runs src/main.ts in its own process, as `npm start` would, and waits for /healthz. A
 * benchmark passes its own TypeScript `loader` (bench/register.js), which leaves out
 * what ts-node loads besides (Node's REPL, and with it `domain`).
 */
export async function startServerProcess(env: Record<string, string>, loader?: string): Promise<ServerProcess> {
  return onFreePort(async (port) => {
    // Suites run in parallel: gRPC only where a suite asks for it.
    const child = spawnScript(
      'src/main.ts',
      { HOST: '127.0.0.1', PORT: String(port), GRPC_PORT: 'off', ...env },
      [],
      loader,
    );
    const baseUrl = `http://127.0.0.1:${port}`;
    await waitUntil(
      child,
      () =>
        // Bounded: whatever else answers on the port must not stall the wait past its deadline.
        fetch(`${baseUrl}/healthz`, { signal: AbortSignal.timeout(2_000) }).then(
          (res) => res.ok,
          () => false,
        ),
      'server',
    );
    return { ...child, baseUrl };
  });
}

/** Runs src/worker.ts (`npm run worker`) and waits for its start line. */
export async function startWorkerProcess(env: Record<string, string>): Promise<ChildScript> {
  const child = spawnScript('src/worker.ts', { LOG_LEVEL: 'info', ...env });
  await waitUntil(child, async () => child.output().includes('event worker started'), 'worker');
  return child;
}
