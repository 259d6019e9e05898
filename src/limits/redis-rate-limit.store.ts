import Redis from 'ioredis';
import type { RateLimitStore, StoreOp, WindowState } from './rate-limit.store';

/**
 * Counters shared by every instance. One Lua script reads both windows and
 * increments atomically, on Redis's clock, so instances with skewed clocks still
 * agree on window boundaries.
 */
const SCRIPT = `
local windowMs = tonumber(ARGV[1])
local mode = ARGV[2]
local limit = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local index = math.floor(now / windowMs)
local elapsed = now - index * windowMs
local currentKey = KEYS[1] .. ':' .. index
if mode == 'clear' then
  redis.call('DEL', currentKey, KEYS[1] .. ':' .. (index - 1))
  return { 0, 0, elapsed, 0 }
end
local previous = tonumber(redis.call('GET', KEYS[1] .. ':' .. (index - 1)) or '0')
local current = tonumber(redis.call('GET', currentKey) or '0')
local admitted = 0
local estimate = previous * (windowMs - elapsed) / windowMs + current
if mode == 'add' or (mode == 'consume' and estimate + cost <= limit) then
  current = redis.call('INCRBY', currentKey, cost)
  redis.call('PEXPIRE', currentKey, windowMs * 2)
  if mode == 'consume' then admitted = 1 end
end
return { previous, current, elapsed, admitted }
`;

export class RedisRateLimitStore implements RateLimitStore {
  private readonly redis: Redis;

  constructor(
    url: string,
    private readonly prefix: string,
  ) {
    // No offline queue and a command timeout: while Redis is away a call fails at once
    // (and the caller falls back), and ioredis keeps reconnecting in the background.
    this.redis = new Redis(url, {
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      lazyConnect: false,
      commandTimeout: 1_000,
      connectTimeout: 2_000,
    });
    this.redis.defineCommand('slidingWindow', { numberOfKeys: 1, lua: SCRIPT });
    // Errors surface on each call (and fall back there); keep ioredis from throwing globally.
    this.redis.on('error', () => undefined);
  }

  /** Resolves once connected, or after `timeoutMs` (the caller then starts in memory). */
  async waitUntilConnected(timeoutMs: number): Promise<boolean> {
    if (this.connected) {
      return true;
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.redis.off('ready', done);
        resolve(this.connected);
      };
      const timer = setTimeout(done, timeoutMs);
      this.redis.once('ready', done);
    });
  }

  /** Connected and ready for commands (ioredis reconnects by itself after an outage). */
  get connected(): boolean {
    return this.redis.status === 'ready';
  }

  async apply(key: string, windowMs: number, op: StoreOp): Promise<WindowState> {
    const limit = op.kind === 'consume' ? op.limit : 0;
    const cost = op.kind === 'read' ? 0 : op.cost;
    const [previous, current, elapsedMs, admitted] = await this.run(key, windowMs, op.kind, limit, cost);
    return { previous, current, elapsedMs, admitted: admitted === 1 };
  }

  async clear(key: string, windowMs: number): Promise<void> {
    await this.run(key, windowMs, 'clear', 0, 0);
  }

  private run(key: string, windowMs: number, mode: string, limit: number, cost: number): Promise<number[]> {
    const redis = this.redis as unknown as {
      slidingWindow: (key: string, ...args: Array<string | number>) => Promise<number[]>;
    };
    return redis.slidingWindow(this.prefix + key, windowMs, mode, limit, cost);
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
