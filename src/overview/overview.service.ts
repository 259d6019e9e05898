import { Injectable } from '@nestjs/common';
import { AdmissionService } from '../admission/admission.service';
import { ApprovalsService } from '../approvals/approvals.service';
import type { AdminKeyPrincipal, ConsolePrincipal } from '../common/principal';
import { WebhooksRepository } from '../events/webhooks.repository';
import { KeysService } from '../keys/keys.service';
import { TaskActivityRepository, type TaskHour } from '../ledger/task-activity.repository';
import { isTerminal } from '../ledger/task-state';
import { UpstreamsService } from '../upstream/upstreams.service';
import type { OverviewQuery } from './dto/overview.query';
import type {
  DeliveryCounts,
  FailingUpstreamView,
  OverviewHourView,
  OverviewView,
  Percentiles,
  TaskCounts,
} from './overview.view';

const HOUR_MS = 3_600_000;
/** Keys that expire within this many days need attention. */
const EXPIRING_WITHIN_DAYS = 7;
/** How many of each kind of thing needing attention are listed. */
const ATTENTION_LIMIT = 20;

const noTasks = (): TaskCounts => ({ completed: 0, failed: 0, canceled: 0, rejected: 0, open: 0 });
const noDeliveries = (): DeliveryCounts => ({ succeeded: 0, failed: 0, retrying: 0 });

/**
 * `GET /api/v1/overview` (docs/api.md §13, "The overview"): an organization's last hours
 * at a glance, read from each owner's indexed aggregates in parallel and laid out as one
 * entry per hour (hours without activity count zero).
 */
@Injectable()
export class OverviewService {
  constructor(
    private readonly tasks: TaskActivityRepository,
    private readonly admission: AdmissionService,
    private readonly webhooks: WebhooksRepository,
    private readonly upstreams: UpstreamsService,
    private readonly approvals: ApprovalsService,
    private readonly keys: KeysService,
  ) {}

  async overview(principal: AdminKeyPrincipal | ConsolePrincipal, query: OverviewQuery): Promise<OverviewView> {
    const organizationId = principal.organizationId;
    const hours = query.hours ?? 24;
    const first = Math.floor(Date.now() / HOUR_MS) - hours + 1;
    const since = new Date(first * HOUR_MS);
    const [taskHours, denials, deliveries, failingWebhooks, forwards, pending, expiring] = await Promise.all([
      this.tasks.tasksPerHour(organizationId, since),
      this.admission.denialsPerHour(organizationId, since),
      this.webhooks.deliveriesPerHour(organizationId, since),
      this.webhooks.failingWebhooks(organizationId, ATTENTION_LIMIT),
      this.upstreams.forwardsPerHour(organizationId, since),
      this.approvals.pendingCount(organizationId),
      this.keys.list(principal, { expiring_within_days: EXPIRING_WITHIN_DAYS, limit: ATTENTION_LIMIT }),
    ]);

    const series: OverviewHourView[] = Array.from({ length: hours }, (_, i) => ({
      hour: new Date((first + i) * HOUR_MS).toISOString(),
      tasks: noTasks(),
      time_to_complete_ms: { p50: null, p95: null },
      denials: { inbound: 0, outbound: 0 },
      webhook_deliveries: noDeliveries(),
      upstream_forwards: noDeliveries(),
    }));
    const at = (hour: number | null) => (hour === null ? undefined : series[hour - first]);
    const totals = {
      tasks: noTasks(),
      time_to_complete_ms: { p50: null, p95: null } as Percentiles,
      denials: { inbound: 0, outbound: 0 },
      webhook_deliveries: noDeliveries(),
      upstream_forwards: noDeliveries(),
    };
    for (const row of taskHours) {
      if (row.state === null) {
        const percentiles = { p50: rounded(row.p50Ms), p95: rounded(row.p95Ms) };
        if (row.hour === null) {
          totals.time_to_complete_ms = percentiles;
        } else if (at(row.hour)) {
          at(row.hour)!.time_to_complete_ms = percentiles;
        }
        continue;
      }
      const bucket = stateBucket(row);
      totals.tasks[bucket] += row.count;
      const entry = at(row.hour);
      if (entry) {
        entry.tasks[bucket] += row.count;
      }
    }
    /** Adds an hour's counts to the window's totals and to its hour's entry. */
    const tally = <T extends object>(total: T, of: (entry: OverviewHourView) => T, row: T & { hour: number }) => {
      add(total, row);
      const entry = at(row.hour);
      if (entry) {
        add(of(entry), row);
      }
    };
    denials.forEach((row) => tally(totals.denials, (entry) => entry.denials, row));
    deliveries.forEach((row) => tally(totals.webhook_deliveries, (entry) => entry.webhook_deliveries, row));
    const upstreams = new Map<string, FailingUpstreamView>();
    for (const row of forwards) {
      tally(totals.upstream_forwards, (entry) => entry.upstream_forwards, row);
      if (row.failed > 0 || row.retrying > 0) {
        const seen = upstreams.get(row.handle) ?? { identity: row.handle, failed: 0, retrying: 0, last_error_at: null };
        seen.failed += row.failed;
        seen.retrying += row.retrying;
        const last = row.lastErrorAt?.toISOString() ?? null;
        if (last !== null && (seen.last_error_at === null || last > seen.last_error_at)) {
          seen.last_error_at = last;
        }
        upstreams.set(row.handle, seen);
      }
    }
    return {
      since: since.toISOString(),
      hours,
      series,
      totals,
      approvals_pending: pending,
      attention: {
        failing_webhooks: failingWebhooks.map((hook) => ({
          id: hook.id,
          url: hook.url,
          status: hook.status,
          failing_since: hook.failingSince.toISOString(),
        })),
        expiring_keys: expiring.api_keys.sort((a, b) => (a.expires_at ?? '').localeCompare(b.expires_at ?? '')),
        failing_upstreams: [...upstreams.values()]
          .sort((a, b) => (b.last_error_at ?? '').localeCompare(a.last_error_at ?? ''))
          .slice(0, ATTENTION_LIMIT),
      },
    };
  }
}

function stateBucket(row: TaskHour): keyof TaskCounts {
  const state = row.state!;
  return isTerminal(state) ? (state as Exclude<keyof TaskCounts, 'open'>) : 'open';
}

function rounded(ms: number | null): number | null {
  return ms === null ? null : Math.round(ms);
}

/** Adds the counts of `row` that `into` has. */
function add<T extends object>(into: T, row: T): void {
  for (const key of Object.keys(into) as (keyof T)[]) {
    (into[key] as number) += row[key] as number;
  }
}
