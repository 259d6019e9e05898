import { Inject, Injectable, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import type { Logger } from 'pino';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { AppError } from '../common/app-error';
import { LOGGER } from '../common/tokens';
import { Metrics } from '../metrics/metrics';
import { estimate, MemoryRateLimitStore, type StoreOp, type WindowState } from './rate-limit.store';
import { RedisRateLimitStore } from './redis-rate-limit.store';

/** The quotas of docs/api.md §10, each with a name used in the RateLimit headers. */
export type QuotaName =
  'protocol' | 'rest' | 'public' | 'signup' | 'login' | 'login_attempts' | 'webhook_tests' | 'upstream_tests';

/** Where the RateLimit headers go: an HTTP response, or a gRPC call's metadata. */
export interface HeaderSink {
  setHeader(name: string, value: string): unknown;
}

interface Quota {
  limit: number;
  windowMs: number;
}

export interface QuotaState {
  quota: QuotaName;
  limit: number;
  windowSeconds: number;
  remaining: number;
  /** Seconds until the quota has fully recovered. */
  resetSeconds: number;
  /** Seconds until one more request would be admitted (0 when admitted now). */
  retryAfterSeconds: number;
}

/**
 * Rate limits per subject (an API key's id, a Console user, a client address —
 * never a raw key). With REDIS_URL the counters are shared; while Redis is
 * unreachable each instance counts in its own memory instead (limits stay on,
 * per instance), and goes back to Redis once it answers again.
 */
@Injectable()
export class RateLimitService implements OnModuleInit, OnApplicationShutdown {
  private readonly quotas: Record<QuotaName, Quota>;
  private readonly shared: RedisRateLimitStore | null;
  private readonly local = new MemoryRateLimitStore();
  /** Counting in memory because Redis failed (logged once per outage). */
  private degraded = false;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly metrics: Metrics,
  ) {
    const limits = config.rateLimits;
    this.quotas = {
      protocol: { limit: limits.protocolPerMinute, windowMs: 60_000 },
      rest: { limit: limits.restPerMinute, windowMs: 60_000 },
      public: { limit: limits.publicPerMinute, windowMs: 60_000 },
      signup: { limit: limits.signupsPerHour, windowMs: 3_600_000 },
      login: { limit: config.loginFailureLimit, windowMs: config.loginFailureWindowSeconds * 1000 },
      // Every login runs bcrypt, even for unknown emails: bounded per address.
      login_attempts: { limit: limits.loginAttemptsPerMinute, windowMs: 60_000 },
      // Each ping is a delivery: bounded per organization, on top of the REST quota.
      webhook_tests: { limit: limits.webhookTestsPerMinute, windowMs: 60_000 },
      // Each test reads an outside card on demand (up to three URLs): bounded per organization, likewise.
      upstream_tests: { limit: limits.upstreamTestsPerMinute, windowMs: 60_000 },
    };
    this.shared = config.redisUrl ? new RedisRateLimitStore(config.redisUrl, `${config.redisKeyPrefix}rl:`) : null;
  }

  /** Starts counting in Redis when it answers within a moment; in memory otherwise (it is retried). */
  async onModuleInit(): Promise<void> {
    if (this.shared && !(await this.shared.waitUntilConnected(2_000))) {
      this.fellBack(null);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.shared?.close();
    await this.local.close();
  }

  /** For /readyz: whether the shared store answers; null without REDIS_URL. */
  redisHealthy(): boolean | null {
    return this.shared ? this.shared.connected : null;
  }

  /**
   * Spends one unit of `quota` for `subject`, setting the RateLimit headers on the
   * response; throws 429 (with Retry-After) when the quota is used up. Without
   * REDIS_URL it counts in memory and answers synchronously (no promise: every
   * request runs it); with Redis it returns the promise of the shared count.
   */
  enforce(res: HeaderSink, quota: QuotaName, subject: string): Promise<void> | void {
    const { limit, windowMs } = this.quotas[quota];
    const op: StoreOp = { kind: 'consume', limit, cost: 1 };
    if (!this.shared) {
      const window = this.local.applyNow(`${quota}:${subject}`, windowMs, op);
      return this.spent(res, quotaState(quota, limit, windowMs, window, window.admitted));
    }
    return this.apply(quota, subject, op).then((state) => this.spent(res, state));
  }

  /**
   * Reserves one unit of `quota` for `subject` before the work it guards runs (a
   * login's bcrypt): the check and the count are one atomic step in the store, so
   * concurrent attempts cannot all pass a check made before any of them counted.
   * Throws 429 past the limit. A success gives its reservation back with `clear`.
   */
  async reserve(quota: QuotaName, subject: string): Promise<void> {
    const state = await this.apply(quota, subject, { kind: 'consume', limit: this.quotas[quota].limit, cost: 1 });
    if (state.retryAfterSeconds > 0) {
      throw this.refused(state);
    }
  }

  async clear(quota: QuotaName, subject: string): Promise<void> {
    const key = `${quota}:${subject}`;
    await this.local.clear(key);
    if (!this.shared?.connected) {
      return;
    }
    try {
      await this.shared.clear(key, this.quotas[quota].windowMs);
    } catch (error) {
      this.fellBack(error);
    }
  }

  private spent(res: HeaderSink, state: QuotaState): void {
    setRateLimitHeaders(res, state);
    if (state.retryAfterSeconds > 0) {
      throw this.refused(state);
    }
  }

  private refused(state: QuotaState): AppError {
    this.metrics.rateLimit(state.quota);
    return rateLimited(state);
  }

  private async apply(quota: QuotaName, subject: string, op: StoreOp): Promise<QuotaState> {
    const { limit, windowMs } = this.quotas[quota];
    const window = await this.storeApply(`${quota}:${subject}`, windowMs, op);
    // For reads, "admitted" answers whether one more request would be.
    const admitted = op.kind === 'consume' ? window.admitted : estimate(window, windowMs) + 1 <= limit;
    return quotaState(quota, limit, windowMs, window, admitted);
  }

  /** Redis when it answers, this instance's memory otherwise. */
  private async storeApply(key: string, windowMs: number, op: StoreOp): Promise<WindowState> {
    if (this.shared?.connected) {
      try {
        const window = await this.shared.apply(key, windowMs, op);
        if (this.degraded) {
          this.degraded = false;
          this.logger.info('rate limit store reachable again; counting in Redis');
        }
        return window;
      } catch (error) {
        this.fellBack(error);
      }
    } else if (this.shared) {
      this.fellBack(null);
    }
    return this.local.apply(key, windowMs, op);
  }

  private fellBack(error: unknown): void {
    if (this.degraded) {
      return;
    }
    this.degraded = true;
    this.logger.warn(
      { err: error ?? undefined },
      'rate limit store unavailable; counting per instance in memory until Redis answers again',
    );
  }
}

export function quotaState(
  quota: QuotaName,
  limit: number,
  windowMs: number,
  window: WindowState,
  admitted: boolean,
): QuotaState {
  const used = estimate(window, windowMs);
  const remaining = Math.max(0, Math.floor(limit - used));
  // The previous window's weight falls linearly to zero at the end of this one;
  // the current window's count clears one window later.
  const resetMs = window.current > 0 ? 2 * windowMs - window.elapsedMs : windowMs - window.elapsedMs;
  return {
    quota,
    limit,
    windowSeconds: windowMs / 1000,
    remaining,
    resetSeconds: Math.max(1, Math.ceil(resetMs / 1000)),
    retryAfterSeconds: admitted ? 0 : Math.max(1, Math.ceil(msUntilAdmitted(limit, windowMs, window) / 1000)),
  };
}

/** How long until the sliding estimate leaves room for one more request. */
function msUntilAdmitted(limit: number, windowMs: number, w: WindowState): number {
  const room = limit - 1;
  // Within the current window the estimate is previous·(W−e−t)/W + current.
  if (w.current <= room && w.previous > 0) {
    return Math.max(0, windowMs - w.elapsedMs - ((room - w.current) * windowMs) / w.previous);
  }
  // Otherwise wait for the next window, where this window's count decays instead.
  const intoNext = w.current > 0 ? Math.max(0, windowMs * (1 - room / w.current)) : 0;
  return windowMs - w.elapsedMs + intoNext;
}

/** draft-ietf-httpapi-ratelimit-headers: `RateLimit-Policy` and `RateLimit` as structured fields. */
export function setRateLimitHeaders(res: HeaderSink, state: QuotaState): void {
  res.setHeader('RateLimit-Policy', policyHeader(state));
  res.setHeader('RateLimit', remainingHeader(state));
}

function rateLimitHeaders(state: QuotaState): Record<string, string> {
  return { 'RateLimit-Policy': policyHeader(state), RateLimit: remainingHeader(state) };
}

const policyHeader = (state: QuotaState) => `"${state.quota}";q=${state.limit};w=${state.windowSeconds}`;
const remainingHeader = (state: QuotaState) =>
  `"${state.quota}";r=${state.remaining};t=${state.retryAfterSeconds || state.resetSeconds}`;

function rateLimited(state: QuotaState): AppError {
  return new AppError(
    429,
    'rate_limited',
    `Rate limit "${state.quota}" exceeded (${state.limit} per ${state.windowSeconds} s); retry after ${state.retryAfterSeconds} s.`,
    {
      headers: { 'Retry-After': String(state.retryAfterSeconds), ...rateLimitHeaders(state) },
    },
  );
}
