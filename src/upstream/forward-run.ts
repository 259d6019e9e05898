import type { Client } from '@a2a-js/sdk/client';

/** Why a forward was stopped from outside: the forwarder shuts down, or the forward was ended elsewhere (its task canceled). */
export class ForwardStopped extends Error {
  constructor(readonly why: 'shutdown' | 'ended') {
    super(why === 'shutdown' ? 'the forwarder is stopping' : 'the forward has ended');
  }
}

/** A bound of the forward passed; its message is the task's status message, naming the bound. */
export class BoundExceeded extends Error {}

export interface ForwardBounds {
  /** UPSTREAM_FORWARD_MAX_MS, from when the forward was queued. */
  forwardMaxMs: number;
  /** UPSTREAM_IDLE_TIMEOUT_MS: the longest the upstream may answer nothing while it is asked. */
  idleTimeoutMs: number;
}

/**
 * One forward while it runs: its abort signal (every upstream call of the forward takes
 * it), and its two bounds — the total time, counted from when it was queued, and the
 * idle time while the upstream is asked something and answers nothing (a response, an
 * event of its stream). A bound that passes aborts the forward with BoundExceeded; the
 * forwarder then fails the task, naming it.
 */
export class ForwardRun {
  private readonly controller = new AbortController();
  private readonly total: NodeJS.Timeout;
  private idle: NodeJS.Timeout | null = null;
  private disposed = false;

  constructor(
    readonly taskId: string,
    readonly kind: 'message' | 'cancel',
    queuedAt: Date,
    private readonly bounds: ForwardBounds,
  ) {
    const left = queuedAt.getTime() + bounds.forwardMaxMs - Date.now();
    this.total = setTimeout(
      () =>
        this.stop(
          new BoundExceeded(
            `The upstream agent did not finish within ${bounds.forwardMaxMs} ms (UPSTREAM_FORWARD_MAX_MS).`,
          ),
        ),
      Math.max(0, left),
    );
    this.touch();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The upstream is asked, or answered: its idle time counts from now. */
  touch(): void {
    if (this.idle) {
      clearTimeout(this.idle);
    }
    if (this.disposed) {
      return;
    }
    const { idleTimeoutMs } = this.bounds;
    this.idle = setTimeout(
      () =>
        this.stop(
          new BoundExceeded(`The upstream agent sent nothing for ${idleTimeoutMs} ms (UPSTREAM_IDLE_TIMEOUT_MS).`),
        ),
      idleTimeoutMs,
    );
  }

  /** The forwarder waits `ms` on its own (between two reads of the task): not the upstream's idle time. Throws once the run stops. */
  wait(ms: number): Promise<void> {
    this.pause();
    return pause(ms, this.signal);
  }

  private pause(): void {
    if (this.idle) {
      clearTimeout(this.idle);
    }
    this.idle = null;
  }

  /** Disposed before the abort, so nothing its listeners do restarts a bound. */
  stop(reason: ForwardStopped | BoundExceeded): void {
    this.dispose();
    if (!this.signal.aborted) {
      this.controller.abort(reason);
    }
  }

  dispose(): void {
    this.disposed = true;
    clearTimeout(this.total);
    this.pause();
  }
}

const STREAMING = new Set<string | symbol>(['sendMessageStream', 'resubscribeTask']);

/**
 * The client as one forward uses it: every call, and every event of a stream, tells the
 * run that the upstream answered (its idle time starts again).
 */
export function watched(client: Client, run: ForwardRun): Client {
  return new Proxy(client, {
    get(target, name, receiver) {
      const value: unknown = Reflect.get(target, name, receiver);
      if (typeof value !== 'function') {
        return value;
      }
      const method = value as (...args: unknown[]) => unknown;
      if (STREAMING.has(name)) {
        return (...args: unknown[]) => touching(method.apply(target, args) as AsyncGenerator<unknown>, run);
      }
      return async (...args: unknown[]) => {
        run.touch();
        const result = await method.apply(target, args);
        run.touch();
        return result;
      };
    },
  });
}

async function* touching<T>(events: AsyncGenerator<T>, run: ForwardRun): AsyncGenerator<T> {
  run.touch();
  for await (const event of events) {
    run.touch();
    yield event;
  }
}

/** The wait before the next read of an upstream task: 1.5 times the last, from `firstMs` up to `maxMs`. */
export function nextPollWait(lastMs: number | null, firstMs: number, maxMs: number): number {
  return lastMs === null ? Math.min(firstMs, maxMs) : Math.min(Math.round(lastMs * 1.5), maxMs);
}

/** Sleeps `ms`, or until the signal aborts (then throws its reason). */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      return reject(signal.reason as Error);
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
