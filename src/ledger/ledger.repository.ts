import { Injectable } from '@nestjs/common';
import { Database, type Tx } from '../database/database';
import { newRowId } from '../database/row-id';
import { DummyValue, GenerateSql } from '../database/generate-sql';
import type { RowOf } from '../database/row';
import { sql, type Sql } from '../database/sql';
import { WriteShape, type WriteBatch } from '../database/write-batch';
import type { Artifact } from './entities/artifact.entity';
import type { ArtifactChunk, TaskEventKind } from './entities/task-event.entity';
import type { MessageRole } from './entities/task-message.entity';
import type { Task } from './entities/task.entity';
import { CHANGES_CHANNEL } from '../events/task-notifier';
import { treePlacement } from './task-tree.repository';
import { EXAMPLE_CHUNK, EXAMPLE_FIRST_MESSAGE, EXAMPLE_TASK, PAIR, ROOT, TREE, U } from './sql-examples';
import {
  type ForwardedTask,
  type MessageRecord,
  type NewTaskTree,
  type TaskHead,
  type TaskPair,
  type UpstreamIds,
} from './task-records';
import { taskHeadOf, type ParticipantRow, type TaskRow } from './task-rows';
import type { TaskState } from './task-state';

export const TASK_COLUMNS =
  sql.raw(`t.id, t.context_id, t.requester_identity_id, t.requester_handle, t.requester_organization_id,
  t.worker_identity_id, t.worker_handle, t.worker_organization_id, t.state, t.status_message_id, t.status_timestamp,
  t.metadata, t.skill, t.held, t.seq, t.created_at, t.updated_at`);

/** What the statement that creates a task found. */
export type CreatedTask =
  | { kind: 'created'; task: TaskHead }
  /** The pair already has a task with this origin message; `newContextId` is a context the statement inserted for nothing. */
  | { kind: 'duplicate'; newContextId: string | null }
  /** The given context is not the pair's. */
  | { kind: 'no_context' };

/** A task's pair as a context and the task list it. */
const PAIR_COLUMNS = [
  ['requester_identity_id', 'uuid'],
  ['requester_handle', 'text'],
  ['requester_organization_id', 'uuid'],
  ['worker_identity_id', 'uuid'],
  ['worker_handle', 'text'],
  ['worker_organization_id', 'uuid'],
] as const;
/**
 * A new task's rows (queueNewTask), as WriteShapes: the sends that go together in one
 * statement (group commit) insert their contexts, tasks, messages and events as one
 * INSERT each.
 */
const NEW_CONTEXT = new WriteShape(
  { c: [['id', 'uuid'], ...PAIR_COLUMNS, ['at', 'timestamptz']] },
  ({ c }) => sql`INSERT INTO contexts
      (id, requester_identity_id, requester_handle, requester_organization_id, worker_identity_id, worker_handle, worker_organization_id, created_at, updated_at)
    SELECT c.id, c.requester_identity_id, c.requester_handle, c.requester_organization_id, c.worker_identity_id, c.worker_handle, c.worker_organization_id, c.at, c.at
      FROM ${c}`,
);
/** A child's: the task ids its message references, and how deep its tree may grow (NewTaskTree). */
const TREE_COLUMNS = [
  ['parent_refs', 'jsonb'],
  ['max_depth', 'int'],
] as const;
/** A new task's row; a child's (one whose message references tasks) with where to look for its parent (treePlacement). */
function newTaskShape(child: boolean) {
  return new WriteShape(
    {
      t: [
        ['id', 'uuid'],
        ['context_id', 'uuid'],
        ...PAIR_COLUMNS,
        ['origin_message_id', 'text'],
        ['metadata', 'jsonb'],
        ['skill', 'text'],
        ['state', 'text'],
        ['status_message_id', 'uuid'],
        ['status_timestamp', 'timestamptz'],
        ['seq', 'int'],
        ['created_at', 'timestamptz'],
        ['updated_at', 'timestamptz'],
        ...(child ? TREE_COLUMNS : []),
      ],
    },
    ({ t }) => {
      const tree = treePlacement(
        sql`t.requester_identity_id`,
        child ? { ids: sql`t.parent_refs`, maxDepth: sql`t.max_depth` } : null,
      );
      return sql`INSERT INTO tasks
      (id, context_id, requester_identity_id, requester_handle, requester_organization_id, worker_identity_id, worker_handle, worker_organization_id,
       origin_message_id, metadata, skill, state, status_message_id, status_timestamp, seq, created_at, updated_at${tree.names})
    SELECT t.id, t.context_id, t.requester_identity_id, t.requester_handle, t.requester_organization_id, t.worker_identity_id, t.worker_handle,
           t.worker_organization_id, t.origin_message_id, t.metadata, t.skill, t.state, t.status_message_id, t.status_timestamp, t.seq,
           t.created_at, t.updated_at${tree.values}
      FROM ${t} ${tree.join}`;
    },
  );
}
const NEW_TASK = newTaskShape(false);
const NEW_CHILD_TASK = newTaskShape(true);
const FIRST_MESSAGE = new WriteShape(
  {
    m: [
      ['id', 'uuid'],
      ['task_id', 'uuid'],
      ['message_id', 'text'],
      ['role', 'text'],
      ['parts', 'jsonb'],
      ['metadata', 'jsonb'],
      ['extensions', 'jsonb'],
      ['reference_task_ids', 'jsonb'],
      ['seq', 'int'],
      ['created_at', 'timestamptz'],
    ],
  },
  ({ m }) => sql`INSERT INTO messages
      (id, task_id, message_id, role, parts, metadata, extensions, reference_task_ids, seq, created_at)
    SELECT m.id, m.task_id, m.message_id, m.role, m.parts, m.metadata, m.extensions, m.reference_task_ids, m.seq, m.created_at
      FROM ${m}`,
);
/** The first message's `status` event. */
const FIRST_EVENT = new WriteShape(
  {
    e: [
      ['task_id', 'uuid'],
      ['seq', 'int'],
      ['state', 'text'],
      ['message_id', 'uuid'],
      ['trace_id', 'text'],
      ['created_at', 'timestamptz'],
    ],
  },
  ({ e }) => sql`INSERT INTO task_events (task_id, seq, kind, state, message_id, trace_id, created_at)
    SELECT e.task_id, e.seq, 'status', e.state, e.message_id, e.trace_id, e.created_at
      FROM ${e}`,
);

/** The SQLSTATE of a lock at an event the task is no longer at (lockTaskAt). */
export const TASK_MOVED_ON = 'TMOVE';

/**
 * The ledger's writes and locks: tasks and their contexts created, locked and saved,
 * and a journal's messages, events and artifacts (under the task's row lock). Rows are
 * typed from the entities (RowOf) and mapped to the records of task-records.ts; the
 * reads of records and pages are TaskReadsRepository's. The services hold the rules
 * (state machine, limits, who may see what) and the transactions.
 */
@Injectable()
export class LedgerRepository {
  constructor(private readonly db: Database) {}

  /** Locks a task (`SELECT … FOR UPDATE`), one of the pair's when `pair` is given. */
  @GenerateSql({ name: 'pair', params: [U, PAIR] }, { name: 'any', params: [U, null] })
  async lockTask(taskId: string, pair: TaskPair | null, tx?: Tx): Promise<TaskHead | null> {
    const row = await this.db.one<TaskRow>(
      pair
        ? sql`SELECT ${TASK_COLUMNS} FROM ${taskByKey(taskId, { lock: true })} WHERE ${ofPair(pair)}`
        : sql`SELECT ${TASK_COLUMNS} FROM tasks t WHERE t.id = ${taskId} FOR UPDATE`,
      tx,
    );
    return row && taskHeadOf(row);
  }

  /**
   * Locks a task as lockTask does, if it is still at event `seq`, without reading it:
   * sent ahead of the transaction's next statement, in its round trip (Database.sendCheck).
   * Otherwise the transaction fails there, before COMMIT, with SQLSTATE TASK_MOVED_ON
   * (a2a_lock_task_at).
   */
  @GenerateSql({ params: [U, 3] })
  lockTaskAt(taskId: string, seq: number, tx: Tx): void {
    this.db.sendCheck(sql`SELECT a2a_lock_task_at(${taskId}::uuid, ${seq}::int)`, tx);
  }

  /** A forwarded task's state and upstream ids. */
  @GenerateSql({ params: [U] })
  async forwardedTask(taskId: string): Promise<ForwardedTask | null> {
    const row = await this.db.one<
      Pick<RowOf<Task>, 'id' | 'state' | 'upstream_task_id' | 'upstream_context_id'> &
        Pick<ParticipantRow, 'worker_identity_id'>
    >(sql`SELECT id, state, worker_identity_id, upstream_task_id, upstream_context_id FROM tasks WHERE id = ${taskId}`);
    return row
      ? {
          id: row.id,
          state: row.state,
          workerIdentityId: row.worker_identity_id,
          upstreamTaskId: row.upstream_task_id,
          upstreamContextId: row.upstream_context_id,
        }
      : null;
  }

  /** Records a forwarded task's upstream ids, the first time they are known. */
  @GenerateSql({ params: [U, { taskId: DummyValue.STRING, contextId: DummyValue.STRING }] })
  async setUpstreamIds(taskId: string, upstream: UpstreamIds, tx?: Tx): Promise<void> {
    await this.db.execute(
      sql`
      UPDATE tasks SET upstream_task_id = ${upstream.taskId}, upstream_context_id = ${upstream.contextId}
       WHERE id = ${taskId} AND upstream_task_id IS NULL`,
      tx,
    );
  }

  /**
   * Inserts a task, with a new context (`contextId` null) or in one of the pair's
   * contexts (whose updated_at moves on only when the task is inserted), in one
   * statement. A task the pair already has for this origin message is not inserted:
   * a retried send. Its parent: the first of `tree.refs` that qualifies (treePlacement).
   */
  @GenerateSql(
    { name: 'new context', params: [PAIR, DummyValue.STRING, { a: 1 }, null, null, ROOT] },
    { name: 'in a context', params: [PAIR, DummyValue.STRING, null, DummyValue.STRING, U, ROOT] },
    { name: 'a child', params: [PAIR, DummyValue.STRING, null, null, null, TREE] },
  )
  async createTask(
    pair: TaskPair,
    originMessageId: string,
    metadata: Record<string, unknown> | null,
    skill: string | null,
    contextId: string | null,
    tree: NewTaskTree,
    tx?: Tx,
  ): Promise<CreatedTask> {
    const { requester: r, worker: w } = pair;
    const context =
      contextId === null
        ? sql`INSERT INTO contexts (id, requester_identity_id, requester_handle, requester_organization_id, worker_identity_id, worker_handle, worker_organization_id)
            VALUES (${newRowId()}, ${r.id}, ${r.handle}, ${r.organizationId}, ${w.id}, ${w.handle}, ${w.organizationId}) RETURNING id`
        : sql`SELECT id FROM contexts WHERE id = ${contextId}::uuid AND requester_identity_id = ${r.id} AND worker_identity_id = ${w.id}`;
    const touch =
      contextId === null
        ? sql.empty
        : sql`, touched AS (UPDATE contexts SET updated_at = now() WHERE id IN (SELECT context_id FROM t))`;
    const place = treePlacement(
      sql`${r.id}::uuid`,
      tree.refs.length > 0
        ? { ids: sql`${JSON.stringify(tree.refs)}::jsonb`, maxDepth: sql`${tree.maxDepth}::int` }
        : null,
    );
    const row = await this.db.one<Partial<TaskRow> & { context_row: string }>(
      sql`
      WITH c AS (${context}),
      t AS (
        INSERT INTO tasks AS t (id, context_id, requester_identity_id, requester_handle, requester_organization_id, worker_identity_id,
                                worker_handle, worker_organization_id, origin_message_id, metadata, skill${place.names})
        SELECT ${newRowId()}, c.id, ${r.id}, ${r.handle}, ${r.organizationId}, ${w.id}, ${w.handle}, ${w.organizationId}, ${originMessageId},
               ${json(metadata)}::jsonb, ${skill}${place.values}
          FROM c ${place.join}
        ON CONFLICT (requester_identity_id, worker_identity_id, origin_message_id) DO NOTHING
        RETURNING ${TASK_COLUMNS}
      )${touch}
      SELECT c.id AS context_row, t.* FROM c LEFT JOIN t ON true`,
      tx,
    );
    if (!row) {
      return { kind: 'no_context' };
    }
    if (!row.id) {
      return { kind: 'duplicate', newContextId: contextId === null ? row.context_row : null };
    }
    const { context_row: _, ...task } = row;
    return { kind: 'created', task: taskHeadOf(task as TaskRow) };
  }

  /**
   * A new task with its first message, as members of a write batch (one statement):
   * its context (inserted, or — one of the pair's — touched), the task row as it
   * stands after the message, the message and its event. No `pg_notify`: the task's id
   * is ours, so nobody on another instance can be waiting on it before this commits
   * (the send's own watch, here, has it from the send's answer). Ids and times are the caller's,
   * so no member reads another's effect. A retried send breaks uq_tasks_origin and a
   * context of another pair fk_tasks_context: the statement fails whole and writes
   * nothing.
   */
  @GenerateSql(
    {
      name: 'new context',
      params: [DummyValue.BATCH, EXAMPLE_TASK, EXAMPLE_FIRST_MESSAGE, DummyValue.STRING, true, null, ROOT],
    },
    {
      name: 'in a context',
      params: [DummyValue.BATCH, EXAMPLE_TASK, EXAMPLE_FIRST_MESSAGE, DummyValue.STRING, false, null, ROOT],
    },
    {
      name: 'a child',
      params: [DummyValue.BATCH, EXAMPLE_TASK, EXAMPLE_FIRST_MESSAGE, DummyValue.STRING, true, null, TREE],
    },
  )
  async queueNewTask(
    batch: WriteBatch,
    task: TaskHead,
    message: MessageRecord,
    originMessageId: string,
    newContext: boolean,
    traceId: string | null,
    tree: NewTaskTree,
  ): Promise<void> {
    const at = task.createdAt;
    const { requester: r, worker: w } = task;
    // The pair, as both the context's and the task's columns list it.
    const pair = [r.id, r.handle, r.organizationId, w.id, w.handle, w.organizationId];
    const child = tree.refs.length > 0;
    await this.db.write(
      [
        newContext
          ? NEW_CONTEXT.of({ c: [[task.contextId, ...pair, at]] })
          : sql`UPDATE contexts SET updated_at = ${at}
                 WHERE id = ${task.contextId} AND requester_identity_id = ${r.id} AND worker_identity_id = ${w.id}`,
        (child ? NEW_CHILD_TASK : NEW_TASK).of({
          t: [
            [
              task.id,
              task.contextId,
              ...pair,
              originMessageId,
              json(task.metadata),
              task.skill,
              task.state,
              task.statusMessageId,
              task.statusTimestamp,
              task.seq,
              at,
              task.updatedAt,
              ...(child ? [JSON.stringify(tree.refs), tree.maxDepth] : []),
            ],
          ],
        }),
        FIRST_MESSAGE.of({
          m: [
            [
              message.rowId,
              task.id,
              message.messageId,
              message.role,
              JSON.stringify(message.parts),
              json(message.metadata),
              JSON.stringify(message.extensions),
              JSON.stringify(message.referenceTaskIds),
              message.seq,
              message.createdAt,
            ],
          ],
        }),
        FIRST_EVENT.of({ e: [[task.id, message.seq, task.state, message.rowId, traceId, message.createdAt]] }),
      ],
      batch,
    );
  }

  /** The task the pair created with this origin message. */
  @GenerateSql({ params: [PAIR, DummyValue.STRING] })
  async originTask(pair: TaskPair, originMessageId: string, tx?: Tx): Promise<string | null> {
    const row = await this.db.one<{ id: string }>(
      sql`
      SELECT id FROM tasks
       WHERE requester_identity_id = ${pair.requester.id} AND worker_identity_id = ${pair.worker.id} AND origin_message_id = ${originMessageId}`,
      tx,
    );
    return row?.id ?? null;
  }

  /** Removes a context that a retried send inserted for nothing (it has no task). */
  @GenerateSql({ params: [U] })
  async deleteEmptyContext(contextId: string, tx?: Tx): Promise<void> {
    await this.db.execute(
      sql`DELETE FROM contexts c WHERE c.id = ${contextId} AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.context_id = c.id)`,
      tx,
    );
  }

  /**
   * Writes a journal's task row as it stands (its times chosen by the journal); the same
   * statement notifies the task's listeners (PostgreSQL delivers it when the
   * transaction commits, to every instance).
   */
  @GenerateSql({ params: [EXAMPLE_TASK, DummyValue.BATCH] })
  async saveTask(task: TaskHead, unit: Tx | WriteBatch): Promise<void> {
    await this.db.write(
      [
        sql`
        UPDATE tasks SET state = ${task.state}, status_message_id = ${task.statusMessageId}, seq = ${task.seq},
               updated_at = ${task.updatedAt}, status_timestamp = ${task.statusTimestamp}, held = ${task.held}
         WHERE id = ${task.id}
        RETURNING pg_notify(${CHANGES_CHANNEL}, ${`${task.id}:${task.seq}`}) AS notified`,
      ],
      unit,
    );
  }

  /**
   * Which of `messageIds` the task holds from that role, and its message count up to
   * `max` (it reads at most `max` entries of the (task_id, seq) index), in one statement.
   */
  @GenerateSql({ params: [U, 'agent', [DummyValue.STRING], 100] })
  async messageRoom(
    taskId: string,
    role: MessageRole,
    messageIds: readonly string[],
    max: number,
    tx?: Tx,
  ): Promise<{ held: string[]; count: number }> {
    const row = await this.db.one<{ held: string[]; count: number }>(
      sql`
      SELECT ARRAY(SELECT message_id FROM messages WHERE task_id = ${taskId} AND role = ${role} AND message_id = ANY(${messageIds}::text[])) AS held,
             (SELECT count(*)::int FROM (SELECT 1 FROM messages WHERE task_id = ${taskId} LIMIT ${max}) m) AS count`,
      tx,
    );
    return row!;
  }

  /** A message (its row id and time chosen by the caller) and its event. */
  @GenerateSql({
    params: [EXAMPLE_FIRST_MESSAGE, 'status', 'submitted', '4bf92f3577b34da6a3ce929d0e0e4736', DummyValue.BATCH],
  })
  async writeMessage(
    message: MessageRecord,
    kind: 'status' | 'message',
    state: TaskState,
    traceId: string | null,
    unit: Tx | WriteBatch,
  ): Promise<void> {
    await this.db.write(
      [
        sql`INSERT INTO messages (id, task_id, message_id, role, parts, metadata, extensions, reference_task_ids, seq, created_at)
            VALUES (${message.rowId}, ${message.taskId}, ${message.messageId}, ${message.role}, ${JSON.stringify(message.parts)}::jsonb,
                    ${json(message.metadata)}::jsonb, ${JSON.stringify(message.extensions)}::jsonb,
                    ${JSON.stringify(message.referenceTaskIds)}::jsonb, ${message.seq}, ${message.createdAt})`,
        eventInsert(message.taskId, message.seq, kind, state, message.rowId, null, traceId, message.createdAt),
      ],
      unit,
    );
  }

  /** An event without a message. */
  @GenerateSql({ params: [U, 2, 'working', new Date(0), null, DummyValue.BATCH] })
  async writeStatus(
    taskId: string,
    seq: number,
    state: TaskState,
    at: Date,
    traceId: string | null,
    unit: Tx | WriteBatch,
  ): Promise<void> {
    await this.db.write([eventInsert(taskId, seq, 'status', state, null, null, traceId, at)], unit);
  }

  /**
   * Before a chunk is written: the artifact content the task holds in all and in the
   * artifact `artifactId`, and that artifact, locked (null when the task has none by
   * that id) — in one statement.
   */
  @GenerateSql({ params: [U, DummyValue.STRING] })
  async lockArtifact(
    taskId: string,
    artifactId: string,
    tx?: Tx,
  ): Promise<{
    total: number;
    own: number;
    existing: Pick<RowOf<Artifact>, 'name' | 'description' | 'last_chunk'> | null;
  }> {
    const row = await this.db.one<
      { total: number; own: number; found: boolean } & Pick<RowOf<Artifact>, 'name' | 'description' | 'last_chunk'>
    >(
      sql`
      WITH own AS (
        SELECT name, description, last_chunk FROM artifacts WHERE task_id = ${taskId} AND artifact_id = ${artifactId} FOR UPDATE
      )
      SELECT held.total, held.own, own.name IS NOT NULL AS found, own.name, own.description, own.last_chunk
        FROM (SELECT COALESCE(sum(content_bytes), 0)::float8 AS total,
                     COALESCE(sum(content_bytes) FILTER (WHERE artifact_id = ${artifactId}), 0)::float8 AS own
                FROM artifacts WHERE task_id = ${taskId}) held
        LEFT JOIN own ON true`,
      tx,
    );
    const { total, own, found, name, description, last_chunk } = row!;
    return { total, own, existing: found ? { name, description, last_chunk } : null };
  }

  /**
   * An artifact chunk and its event: the artifact created or replaced (numbered `seq`),
   * or the chunk appended (`append`); the event carries `recorded` (the chunk with the
   * name and description the artifact keeps).
   */
  @GenerateSql(
    { name: 'put', params: [U, EXAMPLE_CHUNK, EXAMPLE_CHUNK, 2, 10, 'working', new Date(0), null, DummyValue.BATCH] },
    {
      name: 'append',
      params: [
        U,
        { ...EXAMPLE_CHUNK, append: true },
        { ...EXAMPLE_CHUNK, append: true },
        2,
        10,
        'working',
        new Date(0),
        null,
        DummyValue.BATCH,
      ],
    },
  )
  async writeArtifact(
    taskId: string,
    chunk: ArtifactChunk,
    recorded: ArtifactChunk,
    seq: number,
    bytes: number,
    state: TaskState,
    at: Date,
    traceId: string | null,
    unit: Tx | WriteBatch,
  ): Promise<void> {
    const write = chunk.append
      ? sql`
        UPDATE artifacts SET parts = parts || ${JSON.stringify(chunk.parts)}::jsonb, last_chunk = ${chunk.lastChunk}, updated_at = ${at},
               metadata = COALESCE(${json(chunk.metadata)}::jsonb, metadata), content_bytes = content_bytes + ${bytes}
         WHERE task_id = ${taskId} AND artifact_id = ${chunk.artifactId}`
      : sql`
        INSERT INTO artifacts (task_id, artifact_id, name, description, parts, metadata, last_chunk, seq, content_bytes, created_at, updated_at)
        VALUES (${taskId}, ${chunk.artifactId}, ${chunk.name}, ${chunk.description}, ${JSON.stringify(chunk.parts)}::jsonb,
                ${json(chunk.metadata)}::jsonb, ${chunk.lastChunk}, ${seq}, ${bytes}, ${at}, ${at})
        ON CONFLICT (task_id, artifact_id) DO UPDATE
           SET name = EXCLUDED.name, description = EXCLUDED.description, parts = EXCLUDED.parts,
               metadata = EXCLUDED.metadata, last_chunk = EXCLUDED.last_chunk, updated_at = EXCLUDED.updated_at,
               content_bytes = EXCLUDED.content_bytes`;
    await this.db.write([write, eventInsert(taskId, seq, 'artifact', state, null, recorded, traceId, at)], unit);
  }
}

/** The pair's tasks: its two identities on their sides (over `tasks t`). */
export function ofPair(pair: TaskPair): Sql {
  return sql`t.requester_identity_id = ${pair.requester.id} AND t.worker_identity_id = ${pair.worker.id}`;
}

/**
 * `tasks t` narrowed to the task with this id through the primary key, for conditions
 * on its sides after it. Written into one WHERE with them, `id = $1` may be read
 * through another index of those columns instead: a cached generic plan (a prepared
 * statement's sixth execution on) costs both alike, as each expects one row, and
 * took the pair's index (requester, worker, created_at, id) — which can only seek to
 * the pair and then walks every task of it: 341 index pages a read for a pair of
 * 20,000 tasks, growing with the ledger (BENCHMARKS.md, "Ledger at scale"). OFFSET 0
 * keeps the planner from merging the conditions into the lookup. With `lock`, the
 * row is locked as it is found, before the conditions: a caller who names another
 * pair's task (its id known only to that pair) waits for that task's current writer,
 * as its owner would, and then holds the lock until its own transaction ends on "not
 * found" — at once.
 */
export function taskByKey(taskId: string, { lock = false } = {}): Sql {
  return sql`(SELECT * FROM tasks WHERE id = ${taskId} OFFSET 0${lock ? sql` FOR UPDATE` : sql.empty}) t`;
}

const json = (value: unknown): string | null => (value === null || value === undefined ? null : JSON.stringify(value));

/** A task event's INSERT (a member of a journal's or a send's write). */
function eventInsert(
  taskId: string,
  seq: number,
  kind: TaskEventKind,
  state: TaskState,
  messageRowId: string | null,
  artifact: ArtifactChunk | null,
  traceId: string | null,
  at: Date,
): Sql {
  return sql`INSERT INTO task_events (task_id, seq, kind, state, message_id, artifact, trace_id, created_at)
             VALUES (${taskId}, ${seq}, ${kind}, ${state}, ${messageRowId}, ${json(artifact)}::jsonb, ${traceId}, ${at})`;
}
