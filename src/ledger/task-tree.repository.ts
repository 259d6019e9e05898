import { Injectable } from '@nestjs/common';
import { visibleCondition, type LedgerSide } from '../auth/access';
import { Database } from '../database/database';
import { DummyValue, GenerateSql } from '../database/generate-sql';
import { sql, type Sql } from '../database/sql';
import { countedFromRows } from '../usage/usage.repository';
import type { Participant } from './task-records';
import type { TaskState } from './task-state';

const U = DummyValue.UUID;
const SIDE: LedgerSide = { kind: 'organization', organizationId: U };

/** A task's usage as a tree node shows it (docs/api.md §18): reported, and measured once it ended. */
export interface NodeUsage {
  inputTokens: number;
  outputTokens: number;
  cost: { amount: string; currency: string } | null;
  messages: number;
  parts: number;
  artifactBytes: number;
  /** From creation to its end (to now while it is open). */
  durationMs: number;
  /** Time in each state, once it ended. */
  stateMs: Record<string, number> | null;
}

/** A task of a delegation tree, and whether the caller's side may see it. */
export interface TreeNodeRecord {
  id: string;
  parentTaskId: string | null;
  rootTaskId: string | null;
  depth: number;
  requester: Participant;
  worker: Participant;
  state: TaskState;
  held: boolean;
  createdAt: Date;
  updatedAt: Date;
  /** The caller's side sees it as it sees the task itself (docs/api.md §7): otherwise it is an opaque node. */
  visible: boolean;
  usage: NodeUsage;
}

/** A tree's totals: its tasks by state, and their usage (cost per currency). */
export interface TreeTotalsRecord {
  tasks: number;
  byState: Partial<Record<TaskState, number>>;
  inputTokens: number;
  outputTokens: number;
  messages: number;
  parts: number;
  artifactBytes: number;
  cost: Array<{ amount: string; currency: string }>;
}

/** A delegation tree in the top-trees list: its root task, and the whole tree's size and usage. */
export interface TopTreeRecord {
  id: string;
  requester: Participant;
  worker: Participant;
  state: TaskState;
  createdAt: Date;
  /** The root and its descendants. */
  tasks: number;
  inputTokens: number;
  outputTokens: number;
  cost: Array<{ amount: string; currency: string }>;
}

/**
 * A new task's place in a tree (docs/api.md §18), for the statement that inserts it
 * (over its `requester` column): `names` and `values` follow the insert's other columns,
 * `join` its FROM. A message that references tasks (`refs`, a jsonb array of task ids,
 * in the message's order) has as its parent the first of them that is an open task —
 * not terminal, not held — whose worker is the new task's requester, each found through
 * the primary key; a child is one deeper than its parent, within `maxDepth` (TDEEP).
 * One that references none — the usual send — or none that qualifies is a root: its
 * tree columns keep their defaults (no parent, no root, depth 0), and with no
 * references nothing is looked up at all.
 */
export function treePlacement(
  requester: Sql,
  refs: { ids: Sql; maxDepth: Sql } | null,
): {
  names: Sql;
  values: Sql;
  join: Sql;
} {
  if (refs === null) {
    return { names: sql.empty, values: sql.empty, join: sql.empty };
  }
  return {
    names: sql.raw(', parent_task_id, root_task_id, depth'),
    values: sql`, p.id, COALESCE(p.root_task_id, p.id), COALESCE(a2a_child_depth(p.depth + 1, ${refs.maxDepth}), 0)`,
    join: sql`LEFT JOIN LATERAL (
      SELECT p.id, p.root_task_id, p.depth FROM jsonb_array_elements_text(${refs.ids}) WITH ORDINALITY r(id, ord)
        JOIN tasks p ON p.id = r.id::uuid
       WHERE p.worker_identity_id = ${requester} AND p.state IN ('submitted', 'working', 'input-required', 'auth-required')
         AND NOT p.held
       ORDER BY r.ord LIMIT 1) p ON true`,
  };
}

/** An open node's counts, from its rows (a node page is bounded). */
const COUNTED = countedFromRows('n');

type NodeRow = {
  id: string;
  parent_task_id: string | null;
  root_task_id: string | null;
  depth: number;
  requester_identity_id: string;
  requester_handle: string;
  requester_organization_id: string;
  worker_identity_id: string;
  worker_handle: string;
  worker_organization_id: string;
  state: TaskState;
  held: boolean;
  created_at: Date;
  updated_at: Date;
  visible: boolean;
  input_tokens: number;
  output_tokens: number;
  cost_amount: string | null;
  cost_currency: string | null;
  messages: number;
  parts: number;
  artifact_bytes: number;
  duration_ms: number;
  state_ms: Record<string, number> | null;
};

/**
 * Read model: a node's columns over `tasks n LEFT JOIN task_usage u` — each node with its
 * usage in the statement that reads it: measured where the task ended, counted from its
 * rows while it is open (a node page is bounded).
 */
function nodeColumns(side: LedgerSide): Sql {
  return sql`n.id, n.parent_task_id, n.root_task_id, n.depth, n.requester_identity_id, n.requester_handle,
    n.requester_organization_id, n.worker_identity_id, n.worker_handle, n.worker_organization_id, n.state, n.held,
    n.created_at, n.updated_at, ${visibleCondition('n', side, {}, sql`NOT n.held`)} AS visible,
    COALESCE(u.input_tokens, 0)::float8 AS input_tokens, COALESCE(u.output_tokens, 0)::float8 AS output_tokens,
    trim_scale(u.cost_amount)::text AS cost_amount, u.cost_currency,
    COALESCE(u.messages, ${COUNTED.messages})::int AS messages, COALESCE(u.parts, ${COUNTED.parts})::int AS parts,
    COALESCE(u.artifact_bytes, ${COUNTED.artifactBytes})::float8 AS artifact_bytes,
    COALESCE(u.duration_ms, extract(epoch FROM now() - n.created_at) * 1000)::float8 AS duration_ms, u.state_ms`;
}

/**
 * Delegation trees (docs/api.md §18): a task's ancestors and descendants through
 * `parent_task_id` (ix_tasks_parent), a tree's totals through `root_task_id`
 * (ix_tasks_root). Read model (task_usage): each node with its usage, in the same
 * statement.
 */
@Injectable()
export class TaskTreeRepository {
  constructor(private readonly db: Database) {}

  /** The task itself, when it exists (visible or not: the caller decides). */
  @GenerateSql({ params: [U, SIDE] })
  async node(taskId: string, side: LedgerSide): Promise<TreeNodeRecord | null> {
    const row = await this.db.one<NodeRow>(sql`
      SELECT ${nodeColumns(side)} FROM tasks n LEFT JOIN task_usage u ON u.task_id = n.id WHERE n.id = ${taskId}`);
    return row ? toNode(row) : null;
  }

  /** The task's ancestors, its parent first, up to its root (at most `max`). */
  @GenerateSql({ params: [U, SIDE, 16] })
  async ancestors(taskId: string, side: LedgerSide, max: number): Promise<TreeNodeRecord[]> {
    const rows = await this.db.rows<NodeRow>(sql`
      WITH RECURSIVE up AS (
        SELECT t.parent_task_id AS id, 1 AS hop FROM tasks t WHERE t.id = ${taskId}
        UNION ALL
        SELECT p.parent_task_id, up.hop + 1 FROM up JOIN tasks p ON p.id = up.id WHERE up.hop < ${max}
      )
      SELECT ${nodeColumns(side)}
        FROM up JOIN tasks n ON n.id = up.id LEFT JOIN task_usage u ON u.task_id = n.id
       ORDER BY up.hop`);
    return rows.map(toNode);
  }

  /**
   * The task's descendants, level by level, oldest child first: at most `fanOut + 1`
   * children of each node (one more than shown: the caller flags a node with more),
   * `levels` levels below it, `maxNodes + 1` nodes in all.
   */
  @GenerateSql({ params: [U, SIDE, 50, 16, 500] })
  async descendants(
    taskId: string,
    side: LedgerSide,
    fanOut: number,
    levels: number,
    maxNodes: number,
  ): Promise<TreeNodeRecord[]> {
    const rows = await this.db.rows<NodeRow>(sql`
      WITH RECURSIVE down AS (
        SELECT c.id, 1 AS level
          FROM (SELECT id FROM tasks WHERE parent_task_id = ${taskId} ORDER BY id LIMIT ${fanOut + 1}) c
        UNION ALL
        SELECT c.id, d.level + 1
          FROM down d
          CROSS JOIN LATERAL (SELECT id FROM tasks WHERE parent_task_id = d.id ORDER BY id LIMIT ${fanOut + 1}) c
         WHERE d.level < ${levels}
      ),
      page AS (SELECT id, level FROM down LIMIT ${maxNodes + 1})
      SELECT ${nodeColumns(side)}
        FROM page JOIN tasks n ON n.id = page.id LEFT JOIN task_usage u ON u.task_id = n.id
       ORDER BY page.level, n.id`);
    return rows.map(toNode);
  }

  /** Read model: the totals of the tree rooted at `rootId` (the root and every task with it as root), with their usage (task_usage). */
  @GenerateSql({ params: [U] })
  async totals(rootId: string): Promise<TreeTotalsRecord> {
    const row = await this.db.one<{
      tasks: number;
      by_state: Partial<Record<TaskState, number>> | null;
      input_tokens: number;
      output_tokens: number;
      messages: number;
      parts: number;
      artifact_bytes: number;
      cost: Array<{ amount: string; currency: string }>;
    }>(sql`
      WITH n AS (
        SELECT n.state, u.input_tokens, u.output_tokens, u.messages, u.parts, u.artifact_bytes, u.cost_amount, u.cost_currency
          FROM (SELECT id, state FROM tasks WHERE id = ${rootId}
                UNION ALL SELECT id, state FROM tasks WHERE root_task_id = ${rootId}) n
          LEFT JOIN task_usage u ON u.task_id = n.id
      )
      SELECT count(*)::int AS tasks,
             (SELECT jsonb_object_agg(s.state, s.tasks) FROM (SELECT state, count(*) AS tasks FROM n GROUP BY state) s) AS by_state,
             COALESCE(sum(input_tokens), 0)::float8 AS input_tokens, COALESCE(sum(output_tokens), 0)::float8 AS output_tokens,
             COALESCE(sum(messages), 0)::float8 AS messages, COALESCE(sum(parts), 0)::float8 AS parts,
             COALESCE(sum(artifact_bytes), 0)::float8 AS artifact_bytes,
             (SELECT COALESCE(jsonb_agg(jsonb_build_object('amount', trim_scale(c.amount)::text, 'currency', c.currency)
                                        ORDER BY c.currency), '[]'::jsonb)
                FROM (SELECT cost_currency AS currency, sum(cost_amount) AS amount FROM n
                       WHERE cost_currency IS NOT NULL GROUP BY cost_currency) c) AS cost
        FROM n`);
    const r = row!;
    return {
      tasks: r.tasks,
      byState: r.by_state ?? {},
      inputTokens: r.input_tokens,
      outputTokens: r.output_tokens,
      messages: r.messages,
      parts: r.parts,
      artifactBytes: r.artifact_bytes,
      cost: r.cost,
    };
  }

  /**
   * Read model: the largest delegation trees whose root — a task the
   * caller's side may read, narrowed to one identity by `identity` — was created in
   * [from, to): by their tasks, then their reported tokens; at most `limit`. Only trees
   * with a child. The work is bounded by the caller's own roots in the range (found
   * through its side's indexes): each one's children are counted through ix_tasks_root,
   * never by aggregating every organization's children, so another tenant's delegation
   * costs this page nothing. A child is never older than its root, so none created
   * before `from` can count. Their reported usage (task_usage) is read in the same statement.
   */
  @GenerateSql({ params: [SIDE, undefined, new Date(0), new Date(3600_000), 10] })
  async topTrees(
    side: LedgerSide,
    identity: string | undefined,
    from: Date,
    to: Date,
    limit: number,
  ): Promise<TopTreeRecord[]> {
    const rows = await this.db.rows<{
      id: string;
      requester_identity_id: string;
      requester_handle: string;
      requester_organization_id: string;
      worker_identity_id: string;
      worker_handle: string;
      worker_organization_id: string;
      state: TaskState;
      created_at: Date;
      tasks: number;
      input_tokens: number;
      output_tokens: number;
      cost: Array<{ amount: string; currency: string }>;
    }>(sql`
      WITH top AS (
        SELECT r.id, r.requester_identity_id, r.requester_handle, r.requester_organization_id, r.worker_identity_id,
               r.worker_handle, r.worker_organization_id, r.state, r.created_at, 1 + b.tasks AS tasks,
               (b.input_tokens + COALESCE(ru.input_tokens, 0))::float8 AS input_tokens,
               (b.output_tokens + COALESCE(ru.output_tokens, 0))::float8 AS output_tokens
          FROM tasks r
          CROSS JOIN LATERAL (
            SELECT count(*)::int AS tasks, COALESCE(sum(u.input_tokens), 0) AS input_tokens,
                   COALESCE(sum(u.output_tokens), 0) AS output_tokens
              FROM tasks c LEFT JOIN task_usage u ON u.task_id = c.id
             WHERE c.root_task_id = r.id AND c.created_at >= ${from}
          ) b
          LEFT JOIN task_usage ru ON ru.task_id = r.id
         WHERE r.root_task_id IS NULL AND r.created_at >= ${from} AND r.created_at < ${to}
           AND ${visibleCondition('r', side, { identity }, sql`NOT r.held`)}
           AND b.tasks > 0
         ORDER BY b.tasks DESC,
                  b.input_tokens + b.output_tokens + COALESCE(ru.input_tokens, 0) + COALESCE(ru.output_tokens, 0) DESC, r.id
         LIMIT ${limit}
      )
      SELECT top.*,
             (SELECT COALESCE(jsonb_agg(jsonb_build_object('amount', trim_scale(c.amount)::text, 'currency', c.currency)
                                        ORDER BY c.currency), '[]'::jsonb)
                FROM (SELECT u.cost_currency AS currency, sum(u.cost_amount) AS amount
                        FROM (SELECT top.id UNION ALL SELECT id FROM tasks WHERE root_task_id = top.id) n (id)
                        JOIN task_usage u ON u.task_id = n.id
                       WHERE u.cost_currency IS NOT NULL GROUP BY u.cost_currency) c) AS cost
        FROM top
       ORDER BY top.tasks DESC, top.input_tokens + top.output_tokens DESC, top.id`);
    return rows.map((row) => ({
      id: row.id,
      requester: {
        id: row.requester_identity_id,
        handle: row.requester_handle,
        organizationId: row.requester_organization_id,
      },
      worker: { id: row.worker_identity_id, handle: row.worker_handle, organizationId: row.worker_organization_id },
      state: row.state,
      createdAt: row.created_at,
      tasks: row.tasks,
      inputTokens: row.input_tokens,
      outputTokens: row.output_tokens,
      cost: row.cost,
    }));
  }
}

function toNode(row: NodeRow): TreeNodeRecord {
  return {
    id: row.id,
    parentTaskId: row.parent_task_id,
    rootTaskId: row.root_task_id,
    depth: row.depth,
    requester: {
      id: row.requester_identity_id,
      handle: row.requester_handle,
      organizationId: row.requester_organization_id,
    },
    worker: { id: row.worker_identity_id, handle: row.worker_handle, organizationId: row.worker_organization_id },
    state: row.state,
    held: row.held,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    visible: row.visible,
    usage: {
      inputTokens: row.input_tokens,
      outputTokens: row.output_tokens,
      cost:
        row.cost_amount === null || row.cost_currency === null
          ? null
          : { amount: row.cost_amount, currency: row.cost_currency },
      messages: row.messages,
      parts: row.parts,
      artifactBytes: row.artifact_bytes,
      durationMs: row.duration_ms,
      stateMs: row.state_ms,
    },
  };
}
