import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import type { Response } from 'express';
import type { Logger } from 'pino';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { AppError } from '../common/app-error';
import { LOGGER } from '../common/tokens';
import { estimate, MemoryRateLimitStore, type RateLimitStore, type StoreOp, type WindowState } from './rate-limit.store';
import { RedisRateLimitStore } from './redis-rate-limit.store';

/** The quotas of CONTRACT §10, each with a name used in the RateLimit headers. */
export type QuotaName = 'protocol' | 'rest' | 'public' | 'signup' | 'login' | 'login_attempts';

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
 * never a raw key). A store failure fails open: an outage of Redis must not take
 * the API down with it.
 */
@Injectable()
export class RateLimitService implements OnApplicationShutdown {
  private readonly quotas: Record<QuotaName, Quota>;
  private readonly store: RateLimitStore;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
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
    };
    this.store = config.redisUrl ? new RedisRateLimitStore(config.redisUrl, `${config.redisKeyPrefix}rl:`) : new MemoryRateLimitStore();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.store.close();
  }

  /**
   * Spends one unit of `quota` for `subject`, setting the RateLimit headers on the
   * response; throws 429 (with Retry-After) when the quota is used up.
   */
  async enforce(res: HeaderSink, quota: QuotaName, subject: string): Promise<void> {
    const state = await this.apply(quota, subject, { kind: 'consume', limit: this.quotas[quota].limit, cost: 1 });
    if (!state) return;
    setRateLimitHeaders(res, state);
    if (state.retryAfterSeconds > 0) throw rateLimited(state);
  }

  /** Throws 429 if `subject` has no `quota` left, without spending any (login throttling). */
  async check(quota: QuotaName, subject: string): Promise<void> {
    const state = await this.apply(quota, subject, { kind: 'read' });
    if (state && state.retryAfterSeconds > 0) throw rateLimited(state);
  }

  /** Counts a failure against `quota` (login failures). */
  async penalize(quota: QuotaName, subject: string): Promise<void> {
    await this.apply(quota, subject, { kind: 'add', cost: 1 });
  }

  async clear(quota: QuotaName, subject: string): Promise<void> {
    try {
      await this.store.clear(`${quota}:${subject}`, this.quotas[quota].windowMs);
    } catch (error) {
      this.logger.warn({ err: error, quota }, 'rate limit store unavailable');
    }
  }

  private async apply(quota: QuotaName, subject: string, op: StoreOp): Promise<QuotaState | null> {
    const { limit, windowMs } = this.quotas[quota];
    let window: WindowState;
    try {
      window = await this.store.apply(`${quota}:${subject}`, windowMs, op);
    } catch (error) {
      this.logger.warn({ err: error, quota }, 'rate limit store unavailable; request admitted');
      return null;
    }
    // For reads, "admitted" answers whether one more request would be.
    const admitted = op.kind === 'consume' ? window.admitted : estimate(window, windowMs) + 1 <= limit;
    return quotaState(quota, limit, windowMs, window, admitted);
  }
}

export function quotaState(quota: QuotaName, limit: number, windowMs: number, window: WindowState, admitted: boolean): QuotaState {
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
  for (const [name, value] of Object.entries(rateLimitHeaders(state))) res.setHeader(name, value);
}

function rateLimitHeaders(state: QuotaState): Record<string, string> {
  return {
    'RateLimit-Policy': `"${state.quota}";q=${state.limit};w=${state.windowSeconds}`,
    RateLimit: `"${state.quota}";r=${state.remaining};t=${state.retryAfterSeconds || state.resetSeconds}`,
  };
}

function rateLimited(state: QuotaState): AppError {
  return new AppError(429, 'rate_limited', `Rate limit "${state.quota}" exceeded (${state.limit} per ${state.windowSeconds} s); retry after ${state.retryAfterSeconds} s.`, {
    headers: { 'Retry-After': String(state.retryAfterSeconds), ...rateLimitHeaders(state) },
  });
}
