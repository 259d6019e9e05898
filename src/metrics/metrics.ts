import { Inject, Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../config/config';
import type { Tx } from '../database/database';
import type { WriteBatch } from '../database/write-batch';
import { afterCommit } from '../database/unit-of-work';

/** The bindings of docs/api.md §5. */
export type Binding = 'jsonrpc' | 'rest' | 'grpc';
/** How a protocol method ended: a result, an A2A error it answered, a lost standing, or a fault of the service. */
export type ProtocolOutcome = 'ok' | 'error' | 'refused' | 'internal';
export type DeliveryOutcome = 'succeeded' | 'retrying' | 'failed';
export type ForwardOutcome = 'succeeded' | 'retrying' | 'failed';

/** What a task change tells the metrics: its state after the change, and whether it changed the status. */
interface TaskChange {
  kind: string;
  state?: string;
  changesStatus?: boolean;
}

/** A route that matched no template (an unknown path): one fixed label, never the path itself. */
export const UNMATCHED_ROUTE = 'unmatched';

const TERMINAL_STATES = new Set(['completed', 'failed', 'canceled', 'rejected']);

/** The pool of the `pg` driver (or the embedded one): its counts, when it has them. */
interface PoolCounts {
  totalCount?: number;
  idleCount?: number;
  waitingCount?: number;
}

/**
 * The process's Prometheus registry and every series of docs/operations.md, "Metrics", in one place.
 * Each process (server, worker) has its own; `MetricsServer` serves it at
 * `GET /metrics` on METRICS_PORT. Labels are bounded: routes are templates, methods
 * the handler's method names, outcomes and reasons fixed sets — never a handle or an id.
 * With METRICS_PORT=off nothing is recorded (each call returns at once).
 */
@Injectable()
export class Metrics {
  readonly registry = new Registry();
  readonly enabled: boolean;

  private readonly httpRequests = new Counter({
    name: 'a2a_http_requests_total',
    help: 'HTTP requests, per route template, method and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  private readonly httpDuration = new Histogram({
    name: 'a2a_http_request_duration_seconds',
    help: 'HTTP request latency (until the response is finished), per route template, method and status class.',
    labelNames: ['method', 'route', 'status_class'] as const,
    registers: [this.registry],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  });
  private readonly protocolCalls = new Counter({
    name: 'a2a_protocol_calls_total',
    help: 'A2A protocol method calls, per method, A2A version, binding and outcome.',
    labelNames: ['method', 'version', 'binding', 'outcome'] as const,
    registers: [this.registry],
  });
  private readonly admissionDecisions = new Counter({
    name: 'a2a_admission_decisions_total',
    help: 'Admission decisions of protocol calls, per decision and reason.',
    labelNames: ['decision', 'reason'] as const,
    registers: [this.registry],
  });
  private readonly tasksCreated = new Counter({
    name: 'a2a_tasks_created_total',
    help: 'Tasks created (committed).',
    registers: [this.registry],
  });
  private readonly tasksSettled = new Counter({
    name: 'a2a_tasks_settled_total',
    help: 'Tasks that reached a terminal state (committed), per state.',
    labelNames: ['state'] as const,
    registers: [this.registry],
  });
  private readonly deliveries = new Counter({
    name: 'a2a_deliveries_total',
    help: 'Delivery attempts of webhooks and push notifications, per kind and outcome.',
    labelNames: ['kind', 'outcome'] as const,
    registers: [this.registry],
  });
  private readonly outboxLag = new Gauge({
    name: 'a2a_outbox_lag_seconds',
    help: "Age of the oldest event in this dispatcher's last claim of first attempts (0 when the claim found none): how far delivery runs behind.",
    registers: [this.registry],
  });
  private readonly forwards = new Counter({
    name: 'a2a_upstream_forwards_total',
    help: 'Attempts of the forwarder to upstream agents, per kind (message, cancel) and outcome.',
    labelNames: ['kind', 'outcome'] as const,
    registers: [this.registry],
  });
  private readonly approvalsRequested = new Counter({
    name: 'a2a_approvals_requested_total',
    help: 'Approval requests opened (committed); a2a_approvals_pending counts those pending.',
    registers: [this.registry],
  });
  private readonly approvalsDecided = new Counter({
    name: 'a2a_approvals_decided_total',
    help: 'Approval requests decided (committed), per outcome: approved, denied, expired.',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  private readonly usageTokens = new Counter({
    name: 'a2a_usage_reported_tokens_total',
    help: 'Tokens workers reported for their tasks (docs/api.md §18), per direction (input, output); counted once the report commits.',
    labelNames: ['direction'] as const,
    registers: [this.registry],
  });
  private readonly usageCost = new Counter({
    name: 'a2a_usage_reported_cost_total',
    help: 'Cost workers reported for their tasks, per ISO 4217 currency; counted once the report commits.',
    labelNames: ['currency'] as const,
    registers: [this.registry],
  });
  private readonly quotaRefusals = new Counter({
    name: 'a2a_quota_refusals_total',
    help: "Sends refused because the requester's daily task quota or monthly cost budget was used up.",
    registers: [this.registry],
  });
  /** Read from the database at each scrape, through the reader the approvals module gives (pendingApprovalsFrom). */
  private pendingApprovals: () => Promise<number> = async () => 0;
  private readonly rateLimited = new Counter({
    name: 'a2a_rate_limit_refusals_total',
    help: 'Requests refused by a rate limit (429), per limit.',
    labelNames: ['limit'] as const,
    registers: [this.registry],
  });

  constructor(@Inject(APP_CONFIG) config: AppConfig, dataSource: DataSource) {
    this.enabled = config.metricsPort !== null;
    if (!this.enabled) {
      return;
    }
    // Event-loop lag (nodejs_eventloop_lag_seconds and its percentiles), heap, GC, handles, CPU.
    collectDefaultMetrics({ register: this.registry });
    const pool = () => (dataSource.driver as unknown as { master?: PoolCounts }).master ?? {};
    new Gauge({
      name: 'a2a_db_pool_connections',
      help: 'Database pool connections: total, idle, and requests waiting for one.',
      labelNames: ['state'] as const,
      registers: [this.registry],
      collect() {
        const { totalCount, idleCount, waitingCount } = pool();
        this.set({ state: 'total' }, totalCount ?? 0);
        this.set({ state: 'idle' }, idleCount ?? 0);
        this.set({ state: 'waiting' }, waitingCount ?? 0);
      },
    });
    const pendingApprovals: Gauge = new Gauge({
      name: 'a2a_approvals_pending',
      help: 'Approval requests pending, in every organization, read from the database at each scrape.',
      registers: [this.registry],
      collect: async () => pendingApprovals.set(await this.pendingApprovals()),
    });
  }

  /** How a2a_approvals_pending is read (ApprovalsService gives it at start; this module cannot import approvals). */
  pendingApprovalsFrom(read: () => Promise<number>): void {
    this.pendingApprovals = read;
  }

  http(method: string, route: string, status: number, seconds: number): void {
    if (!this.enabled) {
      return;
    }
    this.httpRequests.inc({ method, route, status: String(status) });
    this.httpDuration.observe({ method, route, status_class: `${Math.floor(status / 100)}xx` }, seconds);
  }

  protocolCall(method: string, version: string, binding: Binding, outcome: ProtocolOutcome): void {
    if (this.enabled) {
      this.protocolCalls.inc({ method, version, binding, outcome });
    }
  }

  admission(allowed: boolean, reason: string): void {
    if (this.enabled) {
      this.admissionDecisions.inc({ decision: allowed ? 'allowed' : 'denied', reason });
    }
  }

  /** A task journal's changes, counted once its transaction commits. */
  tasksChanged(unit: Tx | WriteBatch, created: boolean, changes: readonly TaskChange[]): void {
    if (!this.enabled) {
      return;
    }
    const settled = changes
      .filter((c) => (c.kind === 'status' || c.changesStatus) && c.state !== undefined && TERMINAL_STATES.has(c.state))
      .map((c) => c.state!);
    if (!created && settled.length === 0) {
      return;
    }
    afterCommit(unit, () => {
      if (created) {
        this.tasksCreated.inc();
      }
      for (const state of settled) {
        this.tasksSettled.inc({ state });
      }
    });
  }

  delivery(kind: 'webhook' | 'push', outcome: DeliveryOutcome): void {
    if (this.enabled) {
      this.deliveries.inc({ kind, outcome });
    }
  }

  /** The age of the oldest event a claim found (seconds; 0 for none). */
  outboxLagSeen(seconds: number): void {
    if (this.enabled) {
      this.outboxLag.set(Math.max(0, seconds));
    }
  }

  forward(kind: string, outcome: ForwardOutcome): void {
    if (this.enabled) {
      this.forwards.inc({ kind, outcome });
    }
  }

  /** Approval requests opened (`requested`) or decided, counted once their transaction commits. */
  approvals(unit: Tx | WriteBatch, outcome: 'requested' | 'approved' | 'denied' | 'expired', count = 1): void {
    if (!this.enabled || count === 0) {
      return;
    }
    afterCommit(unit, () =>
      outcome === 'requested' ? this.approvalsRequested.inc(count) : this.approvalsDecided.inc({ outcome }, count),
    );
  }

  /** A worker's usage report, counted once it commits. */
  usageReported(
    unit: Tx | WriteBatch,
    usage: { inputTokens: number; outputTokens: number; cost: { amount: string; currency: string } | null },
  ): void {
    if (!this.enabled) {
      return;
    }
    afterCommit(unit, () => {
      this.usageTokens.inc({ direction: 'input' }, usage.inputTokens);
      this.usageTokens.inc({ direction: 'output' }, usage.outputTokens);
      if (usage.cost) {
        this.usageCost.inc({ currency: usage.cost.currency }, Number(usage.cost.amount));
      }
    });
  }

  quotaRefused(): void {
    if (this.enabled) {
      this.quotaRefusals.inc();
    }
  }

  rateLimit(limit: string): void {
    if (this.enabled) {
      this.rateLimited.inc({ limit });
    }
  }
}
