import { Injectable } from '@nestjs/common';
import { Database, type Tx } from '../database/database';
import { DummyValue, GenerateSql } from '../database/generate-sql';
import { sql, type Sql } from '../database/sql';
import { WriteShape, type BatchRows, type WriteBatch } from '../database/write-batch';
import type { CounterPeriod } from './entities/usage-counter.entity';

const U = DummyValue.UUID;

/** What a worker reported for a task (docs/api.md §18): tokens, and a cost in one currency. */
export interface ReportedUsage {
  inputTokens: number;
  outputTokens: number;
  cost: { amount: string; currency: string } | null;
}

/** A budget counter as a write left it: where the requester stands against its limit. */
export interface CounterState {
  identityId: string;
  period: CounterPeriod;
  startsAt: Date;
  /** Sends counted (day) or cost reported (month, a decimal). */
  used: number;
  /** The quota (day) or budget (month) it was counted against; null: none. */
  limit: number | null;
  /** The highest threshold announced so far. */
  notified: number;
}

/** The UTC day and month a moment falls in, and when each ends. */
export interface Periods {
  dayStart: Date;
  dayEnd: Date;
  monthStart: Date;
  monthEnd: Date;
}

export function periodsOf(at: Date): Periods {
  const y = at.getUTCFullYear();
  const m = at.getUTCMonth();
  const d = at.getUTCDate();
  return {
    dayStart: new Date(Date.UTC(y, m, d)),
    dayEnd: new Date(Date.UTC(y, m, d + 1)),
    monthStart: new Date(Date.UTC(y, m, 1)),
    monthEnd: new Date(Date.UTC(y, m + 1, 1)),
  };
}

/** How a usage query groups its rows (docs/api.md §18). */
export type UsageGroup = 'identity' | 'peer' | 'organization' | 'day' | 'hour';

/** Whose rollups a usage query reads: an organization's identities, or one identity. */
export type UsageScope = { kind: 'organization'; organizationId: string } | { kind: 'identity'; identityId: string };

/** A rollup group from one side: its key, the side's role, one currency's totals. */
export interface UsageRow {
  key: string;
  role: 'requester' | 'worker';
  currency: string;
  tasks: number;
  completed: number;
  failed: number;
  canceled: number;
  rejected: number;
  messages: number;
  parts: number;
  artifactBytes: number;
  durationMs: number;
  inputTokens: number;
  outputTokens: number;
  /** A decimal string. */
  cost: string;
}

const USAGE_SUMS = sql.raw(`sum(tasks)::int AS tasks, sum(completed)::int AS completed, sum(failed)::int AS failed,
  sum(canceled)::int AS canceled, sum(rejected)::int AS rejected, sum(messages)::float8 AS messages, sum(parts)::float8 AS parts,
  sum(artifact_bytes)::float8 AS "artifactBytes", sum(duration_ms)::float8 AS "durationMs",
  sum(input_tokens)::float8 AS "inputTokens", sum(output_tokens)::float8 AS "outputTokens", sum(cost)::text AS cost`);

/** The group key over `sides` (one side of a rollup row each). */
const GROUP_KEYS: Record<UsageGroup, Sql> = {
  identity: sql.raw('identity_id::text'),
  peer: sql.raw('peer_id::text'),
  organization: sql.raw('peer_organization_id::text'),
  day: sql.raw(`to_char(date_trunc('day', hour, 'UTC') AT TIME ZONE 'UTC', 'YYYY-MM-DD')`),
  hour: sql.raw(`to_char(hour AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:00:00"Z"')`),
};

/**
 * A task's messages, parts and artifact bytes, counted from its rows (`task`: the alias
 * of its tasks row): what `finish` measures as a task ends, and what a tree node shows
 * while its task is open (TaskTreeRepository).
 */
export function countedFromRows(task: string): { messages: Sql; parts: Sql; artifactBytes: Sql } {
  return {
    messages: sql.raw(`(SELECT count(*) FROM messages m WHERE m.task_id = ${task}.id)`),
    parts: sql.raw(`((SELECT COALESCE(sum(jsonb_array_length(m.parts)), 0) FROM messages m WHERE m.task_id = ${task}.id)
   + (SELECT COALESCE(sum(jsonb_array_length(a.parts)), 0) FROM artifacts a WHERE a.task_id = ${task}.id))`),
    artifactBytes: sql.raw(`(SELECT COALESCE(sum(a.content_bytes), 0) FROM artifacts a WHERE a.task_id = ${task}.id)`),
  };
}

const COUNTED = countedFromRows('t');

/** A task's messages, parts and artifact bytes, and its time from creation to its last change, over `tasks t`. */
const MEASURED = sql`${COUNTED.messages}::int AS messages, ${COUNTED.parts}::int AS parts,
  ${COUNTED.artifactBytes}::bigint AS artifact_bytes, (extract(epoch FROM t.updated_at - t.created_at) * 1000)::bigint AS duration_ms`;

/**
 * Read model: the sends that go together (group commit) counted as one INSERT over their
 * requesters (UsageRepository.countSend); their rows go back to their batches by identity.
 * A day's end is its start + 24 hours (UTC days have no DST).
 */
const COUNTED_SEND = new WriteShape(
  {
    s: [
      ['identity_id', 'uuid'],
      ['day', 'timestamptz'],
      ['day_end', 'timestamptz'],
      ['month', 'timestamptz'],
      ['month_end', 'timestamptz'],
    ],
  },
  ({ s }) => sql`
    INSERT INTO usage_counters AS c (identity_id, period, starts_at, tasks, task_quota)
    SELECT i.id, 'day', s.day,
           a2a_quota_check(1, NULL, COALESCE(m.cost, 0), i.monthly_cost_budget_amount, s.day_end, s.month_end),
           i.daily_task_quota
      FROM ${s} JOIN identities i ON i.id = s.identity_id
      LEFT JOIN usage_counters m ON m.identity_id = i.id AND m.period = 'month' AND m.starts_at = s.month
     WHERE i.daily_task_quota IS NOT NULL OR i.monthly_cost_budget_amount IS NOT NULL
    ON CONFLICT (identity_id, period, starts_at) DO UPDATE SET tasks = c.tasks + 1, task_quota = EXCLUDED.task_quota
    RETURNING c.identity_id, c.starts_at,
              a2a_quota_check(c.tasks, c.task_quota, 0, NULL, c.starts_at + interval '24 hours', NULL) AS used,
              c.task_quota AS "limit", c.notified`,
  { returned: 'identity_id', set: 's', column: 'identity_id' },
);

/**
 * Every statement on the usage tables (docs/api.md §18): a task's usage, the hourly
 * rollups, the budget counters. Writes take `unit` (a transaction or a write batch)
 * and go with the ledger's writes they belong to.
 */
@Injectable()
export class UsageRepository {
  constructor(private readonly db: Database) {}

  /**
   * Adds a report to the task's usage. A cost in another currency than the task's
   * earlier reports: refused (`refuse`: the statement fails with SQLSTATE UCURR, a
   * REST reply's 409) or left out (an upstream agent's answer, which cannot be refused).
   */
  @GenerateSql({
    params: [
      U,
      { inputTokens: 10, outputTokens: 20, cost: { amount: '0.5', currency: 'USD' } },
      'refuse',
      DummyValue.BATCH,
    ],
  })
  async report(
    taskId: string,
    usage: ReportedUsage,
    mismatch: 'refuse' | 'ignore',
    unit: Tx | WriteBatch,
  ): Promise<void> {
    const amount = usage.cost?.amount ?? null;
    const currency = usage.cost?.currency ?? null;
    // Refused: a2a_usage_currency raises UCURR on a second currency. Ignored: that report's cost is not added.
    const currencyAfter =
      mismatch === 'refuse'
        ? sql`a2a_usage_currency(u.cost_currency, EXCLUDED.cost_currency)`
        : sql`COALESCE(u.cost_currency, EXCLUDED.cost_currency)`;
    await this.db.write(
      [
        sql`
        INSERT INTO task_usage AS u (task_id, input_tokens, output_tokens, cost_amount, cost_currency, reports)
        VALUES (${taskId}, ${usage.inputTokens}, ${usage.outputTokens}, ${amount}::numeric, ${currency}, 1)
        ON CONFLICT (task_id) DO UPDATE
           SET input_tokens = u.input_tokens + EXCLUDED.input_tokens, output_tokens = u.output_tokens + EXCLUDED.output_tokens,
               cost_amount = CASE WHEN EXCLUDED.cost_amount IS NULL OR u.cost_currency <> EXCLUDED.cost_currency THEN u.cost_amount
                                  ELSE COALESCE(u.cost_amount, 0) + EXCLUDED.cost_amount END,
               cost_currency = ${currencyAfter},
               reports = u.reports + 1`,
      ],
      unit,
    );
  }

  /**
   * Read model: a task that has just become
   * terminal, measured from the ledger's rows (tasks, messages, artifacts, task_events)
   * — its messages, parts, artifact bytes,
   * time from creation to its last change and time in each state — and added to its
   * hour's rollup, in one statement of the transaction that ended it (sent after its
   * writes, which it must see, in the same round trip as COMMIT). Both members read the
   * same snapshot: the rollup takes the reported usage as earlier statements left it.
   */
  @GenerateSql({ params: [U, DummyValue.BATCH] })
  async finish(taskId: string, unit: Tx | WriteBatch): Promise<void> {
    await this.db.write(
      [
        sql`
        INSERT INTO task_usage AS u (task_id, messages, parts, artifact_bytes, duration_ms, state_ms, finished_at)
        SELECT t.id, ${MEASURED},
               (SELECT COALESCE(jsonb_object_agg(s.state, s.ms), '{}'::jsonb) FROM (
                  SELECT e.state, sum(e.ms)::bigint AS ms FROM (
                    SELECT state, extract(epoch FROM lead(created_at) OVER (ORDER BY seq) - created_at) * 1000 AS ms
                      FROM task_events WHERE task_id = t.id) e
                   WHERE e.ms IS NOT NULL GROUP BY e.state) s),
               t.updated_at
          FROM tasks t WHERE t.id = ${taskId}
        ON CONFLICT (task_id) DO UPDATE
           SET messages = EXCLUDED.messages, parts = EXCLUDED.parts, artifact_bytes = EXCLUDED.artifact_bytes,
               duration_ms = EXCLUDED.duration_ms, state_ms = EXCLUDED.state_ms, finished_at = EXCLUDED.finished_at`,
        sql`
        INSERT INTO usage_hourly AS h (hour, requester_identity_id, requester_organization_id, worker_identity_id,
               worker_organization_id, currency, tasks, completed, failed, canceled, rejected, messages, parts, artifact_bytes,
               duration_ms, input_tokens, output_tokens, cost)
        SELECT date_trunc('hour', t.created_at, 'UTC'), t.requester_identity_id, t.requester_organization_id, t.worker_identity_id,
               t.worker_organization_id, COALESCE(u.cost_currency, ''), 1, (t.state = 'completed')::int, (t.state = 'failed')::int,
               (t.state = 'canceled')::int, (t.state = 'rejected')::int, x.messages, x.parts, x.artifact_bytes, x.duration_ms,
               COALESCE(u.input_tokens, 0), COALESCE(u.output_tokens, 0), COALESCE(u.cost_amount, 0)
          FROM tasks t
          CROSS JOIN LATERAL (SELECT ${MEASURED}) x
          LEFT JOIN task_usage u ON u.task_id = t.id
         WHERE t.id = ${taskId}
        ON CONFLICT (requester_identity_id, worker_identity_id, hour, currency) DO UPDATE
           SET tasks = h.tasks + 1, completed = h.completed + EXCLUDED.completed, failed = h.failed + EXCLUDED.failed,
               canceled = h.canceled + EXCLUDED.canceled, rejected = h.rejected + EXCLUDED.rejected,
               messages = h.messages + EXCLUDED.messages, parts = h.parts + EXCLUDED.parts,
               artifact_bytes = h.artifact_bytes + EXCLUDED.artifact_bytes, duration_ms = h.duration_ms + EXCLUDED.duration_ms,
               input_tokens = h.input_tokens + EXCLUDED.input_tokens, output_tokens = h.output_tokens + EXCLUDED.output_tokens,
               cost = h.cost + EXCLUDED.cost`,
      ],
      unit,
    );
  }

  /**
   * Read model: the requester's budget settings (identities) read by the statement that
   * counts a send against its daily task quota — the send's own statement — when it has
   * a budget (COUNTED_SEND: sends that go together are one INSERT).
   * The counter row's lock makes concurrent sends queue: the one that would go past
   * the quota — or any, once the month's reported cost has reached its budget — fails
   * the statement with SQLSTATE QUOTA (its DETAIL: when the limit resets).
   * `counted` gets the day's counter once the send has committed (nothing without a budget).
   */
  @GenerateSql({ params: [U, new Date(0), DummyValue.BATCH] })
  async countSend(
    requesterId: string,
    at: Date,
    unit: Tx | WriteBatch,
    counted?: (state: CounterState) => void,
  ): Promise<void> {
    const p = periodsOf(at);
    await this.db.write(
      [COUNTED_SEND.of({ s: [[requesterId, p.dayStart, p.dayEnd, p.monthStart, p.monthEnd]] })],
      unit,
      counted && ((rows: BatchRows[]) => rows[0].forEach((row) => counted(counterState('day', row)))),
    );
  }

  /**
   * Read model: the requester's budget (identities) read as a reported cost is added to its month, when its
   * budget is in that currency (other currencies are not counted against it).
   */
  @GenerateSql({ params: [U, { amount: '1.25', currency: 'USD' }, new Date(0), DummyValue.BATCH] })
  async addCost(
    requesterId: string,
    cost: { amount: string; currency: string },
    at: Date,
    unit: Tx | WriteBatch,
    counted?: (state: CounterState) => void,
  ): Promise<void> {
    const p = periodsOf(at);
    await this.db.write(
      [
        sql`
        INSERT INTO usage_counters AS c (identity_id, period, starts_at, cost, cost_budget)
        SELECT i.id, 'month', ${p.monthStart}, ${cost.amount}::numeric, i.monthly_cost_budget_amount
          FROM identities i
         WHERE i.id = ${requesterId} AND i.monthly_cost_budget_currency = ${cost.currency}
        ON CONFLICT (identity_id, period, starts_at) DO UPDATE SET cost = c.cost + EXCLUDED.cost, cost_budget = EXCLUDED.cost_budget
        RETURNING c.identity_id, c.starts_at, c.cost::float8 AS used, c.cost_budget::float8 AS "limit", c.notified`,
      ],
      unit,
      counted && ((rows: BatchRows[]) => rows[0].forEach((row) => counted(counterState('month', row)))),
    );
  }

  /** Marks `level` announced for the period, unless it (or a higher one) was: true when this call did. */
  @GenerateSql({ params: [U, 'day', new Date(0), 80] })
  async claimThreshold(
    identityId: string,
    period: CounterPeriod,
    startsAt: Date,
    level: number,
    tx?: Tx,
  ): Promise<boolean> {
    const changed = await this.db.execute(
      sql`
      UPDATE usage_counters SET notified = ${level}
       WHERE identity_id = ${identityId} AND period = ${period} AND starts_at = ${startsAt} AND notified < ${level}`,
      tx,
    );
    return changed > 0;
  }

  /** An identity's counters of the periods `at` falls in (missing: nothing counted yet). */
  @GenerateSql({ params: [U, new Date(0)] })
  async counters(identityId: string, at: Date): Promise<{ tasksToday: number; costThisMonth: string }> {
    const p = periodsOf(at);
    const row = await this.db.one<{ tasksToday: number; costThisMonth: string }>(sql`
      SELECT COALESCE((SELECT tasks FROM usage_counters WHERE identity_id = ${identityId} AND period = 'day' AND starts_at = ${p.dayStart}), 0) AS "tasksToday",
             COALESCE((SELECT cost FROM usage_counters WHERE identity_id = ${identityId} AND period = 'month' AND starts_at = ${p.monthStart}), 0)::text AS "costThisMonth"`);
    return row!;
  }

  /**
   * Retention: deletes up to `batch` budget counters of periods that had ended by
   * `endedBy` (a day's counters from before its day, a month's from before its month);
   * how many it deleted. Only the current day's and month's counters are read or counted
   * against; the rollups keep the history.
   */
  @GenerateSql({ params: [new Date(0), 500] })
  async pruneCounters(endedBy: Date, batch: number): Promise<number> {
    const p = periodsOf(endedBy);
    return this.db.execute(sql`
      DELETE FROM usage_counters WHERE (identity_id, period, starts_at) IN (
        SELECT identity_id, period, starts_at FROM usage_counters
         WHERE (period = 'day' AND starts_at < ${p.dayStart}) OR (period = 'month' AND starts_at < ${p.monthStart})
         LIMIT ${batch} FOR UPDATE SKIP LOCKED)`);
  }

  /**
   * The rollups of `scope` in [from, to), grouped (docs/api.md §18): each row read from
   * the side(s) in scope — as requester (its identity the requester, its peer the
   * worker) and as worker — by key, role and currency; at most `limit` groups.
   */
  @GenerateSql(
    {
      name: 'organization',
      params: [{ kind: 'organization', organizationId: U }, 'identity', new Date(0), new Date(3600_000), 100],
    },
    { name: 'identity', params: [{ kind: 'identity', identityId: U }, 'day', new Date(0), new Date(3600_000), 100] },
  )
  async usage(scope: UsageScope, group: UsageGroup, from: Date, to: Date, limit: number): Promise<UsageRow[]> {
    const side = (role: 'requester' | 'worker') => {
      const peer = role === 'requester' ? 'worker' : 'requester';
      const inScope =
        scope.kind === 'organization'
          ? sql`${sql.raw(`h.${role}_organization_id`)} = ${scope.organizationId}`
          : sql`${sql.raw(`h.${role}_identity_id`)} = ${scope.identityId}`;
      return sql`
        SELECT ${role}::text AS role, ${sql.raw(`h.${role}_identity_id AS identity_id, h.${peer}_identity_id AS peer_id,
               h.${peer}_organization_id AS peer_organization_id`)}, h.hour, h.currency, h.tasks, h.completed, h.failed,
               h.canceled, h.rejected, h.messages, h.parts, h.artifact_bytes, h.duration_ms, h.input_tokens, h.output_tokens, h.cost
          FROM usage_hourly h
         WHERE ${inScope} AND h.hour >= ${from} AND h.hour < ${to}`;
    };
    return this.db.rows<UsageRow>(sql`
      SELECT ${GROUP_KEYS[group]} AS key, role, currency, ${USAGE_SUMS}
        FROM (${side('requester')} UNION ALL ${side('worker')}) sides
       GROUP BY 1, role, currency
       ORDER BY 1, role, currency
       LIMIT ${limit}`);
  }
}

function counterState(period: CounterPeriod, row: Record<string, unknown>): CounterState {
  return {
    identityId: row.identity_id as string,
    period,
    startsAt: new Date(row.starts_at as string),
    used: Number(row.used),
    limit: row.limit === null ? null : Number(row.limit),
    notified: Number(row.notified),
  };
}
