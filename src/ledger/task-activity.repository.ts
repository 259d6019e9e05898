import { Injectable } from '@nestjs/common';
import { visibleCondition } from '../auth/access';
import { Database } from '../database/database';
import { DummyValue, GenerateSql } from '../database/generate-sql';
import { sql } from '../database/sql';
import { hourOf } from '../database/hour-bucket';
import { isTerminal, TASK_STATES, type TaskState } from './task-state';

/** The final states, as SQL literals (constants of the code, never input). */
const FINAL = sql.raw(
  TASK_STATES.filter(isTerminal)
    .map((state) => `'${state}'`)
    .join(', '),
);

/**
 * One hour of an organization's tasks (docs/api.md §13, "The overview"): how many were created in it, by
 * their state now, and how long those that reached a final state took (status time −
 * creation time). `hour` counts hours since the Unix epoch (UTC); `state` null is the
 * hour's row of every state, carrying the percentiles; `hour` null too, the window's.
 */
export interface TaskHour {
  hour: number | null;
  state: TaskState | null;
  count: number;
  p50Ms: number | null;
  p95Ms: number | null;
}

/** The ledger's figures for the overview: aggregates over the organizations' creation-time indexes. */
@Injectable()
export class TaskActivityRepository {
  constructor(private readonly db: Database) {}

  /**
   * The organization's tasks created since `since`, per hour and state, as either side
   * sees them (a task held for approval counts on the requester's side only). Two range
   * scans of `ix_tasks_requester_organization` and `ix_tasks_worker_organization`.
   */
  @GenerateSql({ params: [DummyValue.UUID, DummyValue.DATE] })
  async tasksPerHour(organizationId: string, since: Date): Promise<TaskHour[]> {
    const took = sql.raw('extract(epoch FROM t.status_timestamp - t.created_at) * 1000');
    const visible = visibleCondition('t', { kind: 'organization', organizationId }, {}, sql.raw('NOT t.held'));
    return this.db.rows<TaskHour>(sql`
      SELECT ${hourOf('t.created_at')} AS hour, t.state, count(*)::int AS count,
             percentile_cont(0.5) WITHIN GROUP (ORDER BY ${took}) FILTER (WHERE t.state IN (${FINAL})) AS "p50Ms",
             percentile_cont(0.95) WITHIN GROUP (ORDER BY ${took}) FILTER (WHERE t.state IN (${FINAL})) AS "p95Ms"
        FROM tasks t
       WHERE t.created_at >= ${since} AND ${visible}
       GROUP BY GROUPING SETS ((1, 2), (1), ())`);
  }
}
