import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import { tooManyRequests, type AppError } from '../common/app-error';
import { LOGGER } from '../common/tokens';
import { Database, type Tx } from '../database/database';
import { failureOf } from '../database/errors';
import type { WriteBatch } from '../database/write-batch';
import { EventsService } from '../events/events.service';
import { Metrics } from '../metrics/metrics';
import { periodsOf, UsageRepository, type CounterState, type ReportedUsage } from './usage.repository';

/** The SQLSTATE of a send over its requester's budget (a2a_quota_check). */
export const QUOTA_EXCEEDED = 'QUOTA';
/** The SQLSTATE of a reported cost in a second currency (a2a_usage_currency). */
export const CURRENCY_MISMATCH = 'UCURR';

/** The thresholds announced by `usage.threshold` (docs/api.md §18), in percent of the limit. */
export const THRESHOLDS = [80, 100] as const;

/** The requester a count or a cost is about. */
export interface Requester {
  id: string;
  handle: string;
  organizationId: string;
}

/** A requester's budget settings (docs/api.md §18) as its identity row has them: null, none. */
export interface BudgetSettings {
  dailyTaskQuota: number | null;
  monthlyCostBudgetAmount: string | null;
}

/**
 * Usage as the ledger and the protocol write it (docs/api.md §18), each write a member
 * of the caller's unit of work: a send counted against its requester's budget, a
 * worker's report added to its task, a task measured and rolled up as it ends. A
 * counter that reaches a threshold is announced (`usage.threshold`) once its write has
 * committed, in a transaction of its own that claims the level first (so it is
 * announced once; should the process stop in between, the next count that finds the
 * level reached and not claimed announces it).
 */
@Injectable()
export class UsageMeter {
  constructor(
    private readonly db: Database,
    private readonly repository: UsageRepository,
    private readonly events: EventsService,
    private readonly metrics: Metrics,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /**
   * Counts a send that starts a task against its requester's daily quota (and month's
   * cost budget). `settings`: the requester's row as the call's admission read it (at
   * its key lookup's admission version, AdmissionService.admitCall) — without a budget
   * there is nothing to count and the send carries no statement for it (the usual send);
   * with one, the count's own statement reads the settings again, under the counter's
   * lock. A budget set while a send is in flight applies from the next send, as a
   * contact rule does.
   */
  async countSend(unit: Tx | WriteBatch, requester: Requester, settings: BudgetSettings, at: Date): Promise<void> {
    if (settings.dailyTaskQuota === null && settings.monthlyCostBudgetAmount === null) {
      return;
    }
    await this.repository.countSend(requester.id, at, unit, (state) => this.crossed(requester, state));
  }

  /**
   * Adds a worker's report to its task (`mismatch`: what a cost in a second currency
   * does, see UsageRepository.report), and its cost to the requester's month.
   */
  async report(
    unit: Tx | WriteBatch,
    task: { id: string; requester: Requester },
    usage: ReportedUsage,
    mismatch: 'refuse' | 'ignore',
  ): Promise<void> {
    await this.repository.report(task.id, usage, mismatch, unit);
    if (usage.cost) {
      await this.repository.addCost(task.requester.id, usage.cost, new Date(), unit, (state) =>
        this.crossed(task.requester, state),
      );
    }
    this.metrics.usageReported(unit, usage);
  }

  /** A task that has just become terminal: measured and rolled up (UsageRepository.finish). */
  finish(unit: Tx | WriteBatch, taskId: string): Promise<void> {
    return this.repository.finish(taskId, unit);
  }

  /** The refusal of a send over its requester's budget (counted), or null for any other failure. */
  refusal(error: unknown): AppError | null {
    const refusal = quotaRefusal(error);
    if (refusal) {
      this.metrics.quotaRefused();
    }
    return refusal;
  }

  /** A counter as a committed write left it: announces the highest threshold reached and not yet announced. */
  private crossed(requester: Requester, state: CounterState): void {
    if (state.limit === null || state.limit <= 0) {
      return;
    }
    const percent = (state.used * 100) / state.limit;
    const level = [...THRESHOLDS].reverse().find((threshold) => percent >= threshold);
    if (level === undefined || level <= state.notified) {
      return;
    }
    void this.announce(requester, state, level).catch((error: unknown) =>
      this.logger.error({ err: error, identity_id: requester.id }, 'usage threshold not announced'),
    );
  }

  private async announce(requester: Requester, state: CounterState, level: number): Promise<void> {
    await this.db.transaction(async (tx) => {
      if (!(await this.repository.claimThreshold(requester.id, state.period, state.startsAt, level, tx))) {
        return;
      }
      const { dayEnd, monthEnd } = periodsOf(state.startsAt);
      const ends = state.period === 'day' ? dayEnd : monthEnd;
      await this.events.emit(tx, {
        type: 'usage.threshold',
        organizationId: requester.organizationId,
        identityIds: [requester.id],
        data: {
          identity: { id: requester.id, agent_handle: requester.handle },
          budget: state.period === 'day' ? 'daily_task_quota' : 'monthly_cost_budget',
          threshold: level,
          used: state.period === 'day' ? state.used : String(state.used),
          limit: state.period === 'day' ? state.limit : String(state.limit),
          period_start: state.startsAt.toISOString(),
          resets_at: ends.toISOString(),
        },
      });
    });
  }
}

/** The refusal of a send over budget (SQLSTATE QUOTA), or null for any other failure. */
export function quotaRefusal(error: unknown): AppError | null {
  const failure = failureOf(error, QUOTA_EXCEEDED);
  if (!failure) {
    return null;
  }
  const resetsAt = new Date(failure.detail ?? Date.now()).toISOString();
  const seconds = Math.max(1, Math.ceil((Date.parse(resetsAt) - Date.now()) / 1000));
  return tooManyRequests('quota_exceeded', `The requester's ${failure.message}; it resets at ${resetsAt}.`, {
    headers: { 'Retry-After': String(seconds) },
    data: { resets_at: resetsAt },
  });
}
