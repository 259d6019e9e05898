import { BeforeApplicationShutdown, Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { Logger } from 'pino';
import { AuditRepository } from '../audit/audit.repository';
import { AdmissionRepository } from '../admission/admission.repository';
import { ApprovalsService } from '../approvals/approvals.service';
import { LOGGER } from '../common/tokens';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { ConsoleRepository } from '../console/console.repository';
import { SsoRepository } from '../console/sso.repository';
import { DeliveriesRepository } from '../events/deliveries.repository';
import { OutboxRepository } from '../events/outbox.repository';
import { IDEMPOTENCY_TTL_HOURS } from '../ledger/idempotency';
import { IdempotencyRepository } from '../ledger/idempotency.repository';
import { KeysService } from '../keys/keys.service';
import { UsageRepository } from '../usage/usage.repository';

/**
 * One kind of row that expires: `prune(batch)` deletes at most `batch` expired rows and
 * says how many went (or, for keys about to expire, writes at most `batch` notices).
 */
export interface Pruner {
  /** Names the kind in log lines and pass results, e.g. `admission_decisions`. */
  readonly name: string;
  prune(batch: number): Promise<number>;
  /** The log line of a pass that handled rows of this kind; by default `retention: expired rows deleted`. */
  readonly logged?: string;
}

/** A pass deletes at most this many batches of one kind; the rest waits for the next pass. */
const MAX_BATCHES_PER_KIND = 100;
/** The first pass runs this soon after start (or after the interval, when shorter), so short-lived processes prune too. */
const FIRST_PASS_MAX_DELAY_MS = 60_000;
const DAY_MS = 86_400_000;
/**
 * A budget counter is kept this long after its day or month ends: a send or a threshold
 * claim in flight across midnight, or on an instance whose clock is a little behind,
 * still finds the counter it counts against.
 */
export const USAGE_COUNTER_MARGIN_MS = DAY_MS;

/**
 * Retention (docs/operations.md, "Retention"): the one place that deletes what has expired — outbox events
 * with their webhook deliveries and finished push deliveries (EVENTS_RETENTION_DAYS),
 * admission decisions (DECISIONS_RETENTION_DAYS), Idempotency-Key records (24 h),
 * expired Console sessions and invitations, budget counters of past days and months
 * (a day after they end, USAGE_COUNTER_MARGIN_MS), and whatever another module registers
 * (`register`: the audit log, AUDIT_RETENTION_DAYS). Each kind's delete statement lives
 * in its owner's repository. It also writes the `api_key.expiring` notices of keys that
 * expire within API_KEY_EXPIRY_NOTICE_DAYS (KeysService.noticeExpiring), once per key,
 * and expires approval requests past APPROVAL_TTL_HOURS (ApprovalsService.expire: their
 * tasks are rejected).
 *
 * Runs where a dispatcher runs (the server with EVENTS_DISPATCHER=inline, and every
 * `npm run worker`), every RETENTION_INTERVAL_MS, off the request path: a kind is
 * deleted in statements of at most RETENTION_BATCH_SIZE rows, again while they come
 * back full, yielding to the event loop between them; the statements skip rows another
 * process holds (SKIP LOCKED), so any number of instances may prune at once.
 */
@Injectable()
export class RetentionService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly pruners: Pruner[] = [];
  private timer: NodeJS.Timeout | null = null;
  private stopping = false;
  private pass: Promise<unknown> = Promise.resolve();

  constructor(
    outbox: OutboxRepository,
    deliveries: DeliveriesRepository,
    admission: AdmissionRepository,
    idempotency: IdempotencyRepository,
    consoleRepository: ConsoleRepository,
    sso: SsoRepository,
    audit: AuditRepository,
    usage: UsageRepository,
    keys: KeysService,
    approvals: ApprovalsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    const {
      events: { retentionDays },
      retention: { decisionsDays, auditDays },
    } = config;
    this.register({ name: 'events', prune: (batch) => outbox.pruneEvents(retentionDays, batch) });
    this.register({ name: 'push_deliveries', prune: (batch) => deliveries.prunePushDeliveries(retentionDays, batch) });
    this.register({ name: 'admission_decisions', prune: (batch) => admission.pruneDecisions(decisionsDays, batch) });
    this.register({
      name: 'idempotency_keys',
      prune: (batch) => idempotency.pruneIdempotencyKeys(IDEMPOTENCY_TTL_HOURS, batch),
    });
    this.register({ name: 'console_sessions', prune: (batch) => consoleRepository.pruneExpiredSessions(batch) });
    this.register({ name: 'console_invites', prune: (batch) => consoleRepository.pruneExpiredInvites(batch) });
    this.register({ name: 'console_sso_logins', prune: (batch) => sso.pruneExpiredLogins(batch) });
    this.register({
      name: 'audit_events',
      prune: (batch) => audit.prune(new Date(Date.now() - auditDays * DAY_MS), batch),
    });
    this.register({
      name: 'usage_counters',
      prune: (batch) => usage.pruneCounters(new Date(Date.now() - USAGE_COUNTER_MARGIN_MS), batch),
    });
    // Not a delete: the `api_key.expiring` notices, which need the same periodic, bounded pass.
    this.register({
      name: 'api_key_expiry_notices',
      prune: (batch) => keys.noticeExpiring(batch),
      logged: 'retention: api_key.expiring events written',
    });
    // Not a delete either: approval requests past APPROVAL_TTL_HOURS expire, their tasks rejected (docs/api.md §16).
    this.register({
      name: 'approvals_expired',
      prune: (batch) => approvals.expire(batch),
      logged: 'retention: approval requests expired',
    });
  }

  /**
   * Adds a kind to every pass (tests register their own; a module with expiring rows
   * of its own may register from its onModuleInit).
   */
  register(pruner: Pruner): void {
    this.pruners.push(pruner);
  }

  onApplicationBootstrap(): void {
    if (this.config.events.dispatcher === 'inline') {
      this.start();
    }
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.stop();
  }

  start(): void {
    if (this.timer) {
      return;
    }
    this.stopping = false;
    this.schedule(Math.min(this.config.retention.intervalMs, FIRST_PASS_MAX_DELAY_MS));
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) {
      clearTimeout(this.timer);
    }
    this.timer = null;
    await this.pass;
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => {
      this.pass = this.runOnce().finally(() => {
        if (!this.stopping) {
          this.schedule(this.config.retention.intervalMs);
        }
      });
    }, delayMs);
    this.timer.unref();
  }

  /** One pass over every kind; how many rows of each went. A kind that fails is logged and the pass goes on. */
  async runOnce(): Promise<Record<string, number>> {
    const batch = this.config.retention.batchSize;
    const pruned: Record<string, number> = {};
    for (const pruner of this.pruners) {
      if (this.stopping) {
        break;
      }
      let total = 0;
      try {
        for (let i = 0, gone = batch; gone === batch && i < MAX_BATCHES_PER_KIND && !this.stopping; i += 1) {
          gone = await pruner.prune(batch);
          total += gone;
          await yieldToLoop();
        }
      } catch (error) {
        this.logger.error({ err: error, kind: pruner.name }, 'retention: could not delete expired rows');
      }
      pruned[pruner.name] = total;
      if (total > 0) {
        this.logger.info({ kind: pruner.name, rows: total }, pruner.logged ?? 'retention: expired rows deleted');
      }
    }
    return pruned;
  }
}
