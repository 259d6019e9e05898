/**
 * Sliding-window counters (the "sliding window counter" approximation): a quota
 * of `limit` per `windowMs` is checked against
 *   previous window's count × (unelapsed share of the current window) + current count,
 * which smooths the double burst a fixed window allows at its edges, with two
 * counters per subject.
 */
export interface WindowState {
  previous: number;
  current: number;
  /** Milliseconds elapsed in the current window. */
  elapsedMs: number;
  /** Whether a `consume` was admitted (and counted). */
  admitted: boolean;
}

export type StoreOp =
  /** Count `cost` only if the estimate stays within `limit`. */
  | { kind: 'consume'; limit: number; cost: number }
  /** Count `cost` unconditionally (failures, e.g. logins). */
  | { kind: 'add'; cost: number }
  /** Read only. */
  | { kind: 'read' };

export interface RateLimitStore {
  apply(key: string, windowMs: number, op: StoreOp): Promise<WindowState>;
  clear(key: string, windowMs: number): Promise<void>;
  close(): Promise<void>;
}

export function estimate(state: Pick<WindowState, 'previous' | 'current' | 'elapsedMs'>, windowMs: number): number {
  return (state.previous * (windowMs - state.elapsedMs)) / windowMs + state.current;
}

/** Per-process counters: correct for one instance; REDIS_URL shares them. */
export class MemoryRateLimitStore implements RateLimitStore {
  /** Each entry keeps its own window length: quotas of different windows share the map. */
  private readonly windows = new Map<string, { windowMs: number; index: number; current: number; previous: number }>();
  private lastSweep = 0;

  constructor(private readonly now: () => number = Date.now) {}

  async apply(key: string, windowMs: number, op: StoreOp): Promise<WindowState> {
    return this.applyNow(key, windowMs, op);
  }

  /** `apply` without the promise: memory answers at once (the rate limit's hot path). */
  applyNow(key: string, windowMs: number, op: StoreOp): WindowState {
    const now = this.now();
    const index = Math.floor(now / windowMs);
    this.sweep(now);
    let entry = this.windows.get(key);
    if (!entry || entry.windowMs !== windowMs || entry.index < index - 1) {
      entry = { windowMs, index, current: 0, previous: 0 };
    } else if (entry.index === index - 1) {
      entry = { windowMs, index, current: 0, previous: entry.current };
    }
    const state = {
      previous: entry.previous,
      current: entry.current,
      elapsedMs: now - index * windowMs,
      admitted: false,
    };
    if (op.kind === 'add' || (op.kind === 'consume' && estimate(state, windowMs) + op.cost <= op.limit)) {
      entry.current += op.cost;
      state.current = entry.current;
      state.admitted = op.kind === 'consume';
    }
    this.windows.set(key, entry);
    return state;
  }

  async clear(key: string): Promise<void> {
    this.windows.delete(key);
  }

  async close(): Promise<void> {
    this.windows.clear();
  }

  /** Drops subjects idle for two of their own windows, at most once a minute. */
  private sweep(now: number): void {
    if (now - this.lastSweep < 60_000) {
      return;
    }
    this.lastSweep = now;
    for (const [key, entry] of this.windows) {
      if (entry.index < Math.floor(now / entry.windowMs) - 1) {
        this.windows.delete(key);
      }
    }
  }
}
