import { Injectable } from '@nestjs/common';
import { visibleCondition, type LedgerSide, type SideFilter } from '../auth/access';
import { Keyset, type KeysetOrder, NEWEST_FIRST } from '../common/pagination';
import { Database, type Tx } from '../database/database';
import { newRowId } from '../database/row-id';
import { DummyValue, GenerateSql } from '../database/generate-sql';
import type { JsonRow, RowOf } from '../database/row';
import { sql, type Sql } from '../database/sql';
import { mergedPage } from '../database/merged-page';
import { WriteShape, type WriteBatch } from '../database/write-batch';
import type { Artifact } from './entities/artifact.entity';
import type { TaskContext } from './entities/context.entity';
import type { IdempotencyKey } from './entities/idempotency-key.entity';
import type { A2AVersion, PushNotificationConfig } from './entities/push-notification-config.entity';
import type { ArtifactChunk, TaskEventKind } from './entities/task-event.entity';
import type { MessageRole, TaskMessage } from './entities/task-message.entity';
import type { Task } from './entities/task.entity';
import { CHANGES_CHANNEL } from '../events/task-notifier';
import {
  participantsOf,
  type ArtifactRecord,
  type ContextRecord,
  type ForwardedTask,
  type HydrateOptions,
  type MessageRecord,
  type NewMessage,
  type ParticipantRow,
  type PushConfigInput,
  type PushConfigRecord,
  type TaskEventRecord,
  type TaskPair,
  type TaskRecord,
  type TaskRow,
  type UpstreamIds,
} from './task-records';
import type { TaskState } from './task-state';

/**
 * Every statement on the ledger's tables: tasks, contexts, messages, task_events,
 * artifacts, push_notification_configs and idempotency_keys. Rows are typed from the
 * entities (RowOf) and mapped to the records of task-records.ts here; the services
 * hold the rules (state machine, limits, who may see what) and the transactions.
 */

const TASK_COLUMNS =
  sql.raw(`t.id, t.context_id, t.requester_identity_id, t.requester_handle, t.requester_organization_id,
  t.worker_identity_id, t.worker_handle, t.worker_organization_id, t.state, t.status_message_id, t.status_timestamp,
  t.metadata, t.seq, t.created_at, t.updated_at`);

const MESSAGE_COLUMNS = sql.raw(
  'm.id, m.task_id, m.message_id, m.role, m.parts, m.metadata, m.extensions, m.reference_task_ids, m.seq, m.created_at',
);

const CONTEXT_COLUMNS = sql.raw(`c.id, c.requester_identity_id, c.requester_handle, c.requester_organization_id,
  c.worker_identity_id, c.worker_handle, c.worker_organization_id, c.created_at, c.updated_at`);

type MessageRow = RowOf<TaskMessage>;
type ContextRow = Pick<RowOf<TaskContext>, 'id' | 'created_at' | 'updated_at'> & ParticipantRow;
type ArtifactRow = Pick<RowOf<Artifact>, 'task_id' | 'artifact_id' | 'name' | 'description' | 'parts' | 'metadata'>;
type PushConfigRow = Pick<
  RowOf<PushNotificationConfig>,
  'task_id' | 'config_id' | 'url' | 'token' | 'authentication' | 'protocol_version'
>;
type IdempotencyRow = Pick<RowOf<IdempotencyKey>, 'request_hash' | 'response_status' | 'response_body'>;

/** The filters of the protocol's ListTasks, over one pair's tasks. */
export interface PairTaskFilter {
  contextId?: string;
  state?: TaskState;
  statusAfter?: Date;
}

/** The filters of GET /api/v1/tasks, over the tasks visible to the caller. */
export interface VisibleTaskFilter extends SideFilter {
  state?: TaskState;
  contextId?: string;
  updatedAfter?: string;
}

/** What the statement that creates a task found. */
export type CreatedTask =
  | { kind: 'created'; row: TaskRow }
  /** The pair already has a task with this origin message; `newContextId` is a context the statement inserted for nothing. */
  | { kind: 'duplicate'; newContextId: string | null }
  /** The given context is not the pair's. */
  | { kind: 'no_context' };

/**
 * A message page: newest first by its place in the history (seq); the cursor names
 * the last message shown (its created_at and row id, as REST cursors do).
 */
export const MESSAGES_NEWEST_FIRST: KeysetOrder = {
  ...NEWEST_FIRST,
  columns: [
    { name: 'seq', cast: 'integer' },
    { name: 'id', cast: 'uuid' },
  ],
};

const U = DummyValue.UUID;
const U2 = DummyValue.UUID_2;
const PAIR: TaskPair = {
  requester: { id: U, handle: DummyValue.HANDLE, organizationId: U },
  worker: { id: U2, handle: DummyValue.HANDLE, organizationId: U2 },
};
const EXAMPLE_TASK: TaskRow = {
  id: U,
  context_id: U,
  requester_identity_id: U,
  requester_handle: DummyValue.HANDLE,
  requester_organization_id: U,
  worker_identity_id: U2,
  worker_handle: DummyValue.HANDLE,
  worker_organization_id: U2,
  state: 'submitted',
  status_message_id: U,
  status_timestamp: DummyValue.DATE,
  metadata: null,
  seq: 1,
  created_at: DummyValue.DATE,
  updated_at: DummyValue.DATE,
};
const EXAMPLE_MESSAGE: NewMessage = {
  messageId: DummyValue.STRING,
  parts: [{ text: 'hello' }],
  metadata: null,
  extensions: [],
  referenceTaskIds: [],
};
const EXAMPLE_FIRST_MESSAGE: MessageRecord = {
  ...EXAMPLE_MESSAGE,
  rowId: U2,
  taskId: U,
  contextId: U,
  role: 'user',
  seq: 1,
  createdAt: DummyValue.DATE,
};
const EXAMPLE_CHUNK: ArtifactChunk = {
  artifactId: DummyValue.STRING,
  name: 'result',
  description: '',
  parts: [{ text: 'out' }],
  metadata: null,
  append: false,
  lastChunk: true,
};
const ORGANIZATION_SIDE: LedgerSide = { kind: 'organization', organizationId: U };
const IDENTITY_SIDE: LedgerSide = { kind: 'identity', identityId: U };

/**
 * A new task's rows (queueNewTask), as WriteShapes: the sends that go together in one
 * statement (group commit) insert their contexts, tasks, messages and events as one
 * INSERT each.
 */
/** A task's pair as a context and the task list it. */
const PAIR_COLUMNS = [
  ['requester_identity_id', 'uuid'],
  ['requester_handle', 'text'],
  ['requester_organization_id', 'uuid'],
  ['worker_identity_id', 'uuid'],
  ['worker_handle', 'text'],
  ['worker_organization_id', 'uuid'],
] as const;
const NEW_CONTEXT = new WriteShape(
  { c: [['id', 'uuid'], ...PAIR_COLUMNS, ['at', 'timestamptz']] },
  ({ c }) => sql`INSERT INTO contexts
      (id, requester_identity_id, requester_handle, requester_organization_id, worker_identity_id, worker_handle, worker_organization_id, created_at, updated_at)
    SELECT c.id, c.requester_identity_id, c.requester_handle, c.requester_organization_id, c.worker_identity_id, c.worker_handle, c.worker_organization_id, c.at, c.at
      FROM ${c}`,
);
const NEW_TASK = new WriteShape(
  {
    t: [
      ['id', 'uuid'],
      ['context_id', 'uuid'],
      ...PAIR_COLUMNS,
      ['origin_message_id', 'text'],
      ['metadata', 'jsonb'],
      ['state', 'text'],
      ['status_message_id', 'uuid'],
      ['status_timestamp', 'timestamptz'],
      ['seq', 'int'],
      ['created_at', 'timestamptz'],
      ['updated_at', 'timestamptz'],
    ],
  },
  ({ t }) => sql`INSERT INTO tasks
      (id, context_id, requester_identity_id, requester_handle, requester_organization_id, worker_identity_id, worker_handle,
       worker_organization_id, origin_message_id, metadata, state, status_message_id, status_timestamp, seq, created_at, updated_at)
    SELECT t.id, t.context_id, t.requester_identity_id, t.requester_handle, t.requester_organization_id, t.worker_identity_id, t.worker_handle,
           t.worker_organization_id, t.origin_message_id, t.metadata, t.state, t.status_message_id, t.status_timestamp, t.seq, t.created_at, t.updated_at
      FROM ${t}`,
);
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

@Injectable()
export class LedgerRepository {
  constructor(private readonly db: Database) {}

  // ---- tasks

  /** A task by its id alone as a record (findRecord): the service's own reads, never on behalf of a caller. */
  @GenerateSql({ params: [U, { historyLength: 0, artifacts: true, maxArtifactBytes: 1000 }] })
  async taskRecord(taskId: string, options: HydrateOptions): Promise<TaskRecord | null> {
    return findRecord(this.db, taskId, sql`TRUE`, options);
  }

  /** Locks a task (`SELECT … FOR UPDATE`), one of the pair's when `pair` is given. */
  @GenerateSql({ name: 'pair', params: [U, PAIR] }, { name: 'any', params: [U, null] })
  async lockTask(taskId: string, pair: TaskPair | null, tx?: Tx): Promise<TaskRow | null> {
    return this.db.one<TaskRow>(
      pair
        ? sql`SELECT ${TASK_COLUMNS} FROM ${taskByKey(taskId, { lock: true })} WHERE ${ofPair(pair)}`
        : sql`SELECT ${TASK_COLUMNS} FROM tasks t WHERE t.id = ${taskId} FOR UPDATE`,
      tx,
    );
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

  /** How many of the pair's tasks match the filter (ListTasks' totalSize). */
  @GenerateSql({ params: [PAIR, { contextId: U, state: 'working', statusAfter: DummyValue.DATE }] })
  async countPairTasks(pair: TaskPair, filter: PairTaskFilter): Promise<number> {
    const row = await this.db.one<{ total: number }>(
      sql`SELECT count(*)::int AS total FROM tasks t WHERE ${pairTaskWhere(pair, filter)}`,
    );
    return row!.total;
  }

  /** A page of the pair's tasks, newest first. */
  @GenerateSql({
    params: [PAIR, { contextId: U, state: 'working', statusAfter: DummyValue.DATE }, new Keyset('t', undefined, 50)],
  })
  async pairTasks(pair: TaskPair, filter: PairTaskFilter, page: Keyset): Promise<TaskRow[]> {
    return this.db.rows<TaskRow>(
      sql`SELECT ${TASK_COLUMNS} FROM tasks t WHERE ${pairTaskWhere(pair, filter)} AND ${page.after} ${page.tail}`,
    );
  }

  /** A page of the tasks visible to `side`, newest first. */
  @GenerateSql(
    {
      name: 'organization',
      params: [
        ORGANIZATION_SIDE,
        { state: 'working', contextId: U, updatedAfter: '2026-01-01T00:00:00Z', peer: DummyValue.HANDLE },
        new Keyset('t', undefined, 50),
      ],
    },
    { name: 'identity', params: [IDENTITY_SIDE, { role: 'worker', identity: U }, new Keyset('t', undefined, 50)] },
  )
  async visibleTasks(side: LedgerSide, filter: VisibleTaskFilter, page: Keyset): Promise<TaskRow[]> {
    const rest = [
      filter.state ? sql`t.state = ${filter.state}` : sql.empty,
      filter.contextId ? sql`t.context_id = ${filter.contextId}::uuid` : sql.empty,
      filter.updatedAfter ? sql`t.updated_at > ${filter.updatedAfter}::timestamptz` : sql.empty,
      page.after,
    ];
    return this.db.rows<TaskRow>(
      visiblePage(
        side,
        filter,
        page,
        (...visible) => sql`SELECT ${TASK_COLUMNS} FROM tasks t ${sql.where([...visible, ...rest])} ${page.tail}`,
      ),
    );
  }

  /** A context's most recent tasks. */
  @GenerateSql({ params: [U, 200] })
  async contextTasks(contextId: string, limit: number): Promise<TaskRow[]> {
    return this.db.rows<TaskRow>(sql`
      SELECT ${TASK_COLUMNS} FROM tasks t WHERE t.context_id = ${contextId} ORDER BY t.created_at DESC, t.id DESC LIMIT ${limit}`);
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

  /** The upstream ids of those of these tasks that were forwarded and answered, by task id. */
  @GenerateSql({ params: [[U]] })
  async upstreamIds(taskIds: readonly string[]): Promise<Map<string, UpstreamIds>> {
    if (taskIds.length === 0) return new Map();
    const rows = await this.db.rows<Pick<RowOf<Task>, 'id' | 'upstream_task_id' | 'upstream_context_id'>>(sql`
      SELECT id, upstream_task_id, upstream_context_id FROM tasks
       WHERE id = ANY(${[...taskIds]}::uuid[]) AND upstream_task_id IS NOT NULL`);
    return new Map(
      rows.map((row) => [row.id, { taskId: row.upstream_task_id!, contextId: row.upstream_context_id ?? '' }]),
    );
  }

  /** Records a forwarded task's upstream ids, the first time they are known. */
  @GenerateSql({ params: [U, { taskId: DummyValue.STRING, contextId: DummyValue.STRING }] })
  async setUpstreamIds(taskId: string, upstream: { taskId: string; contextId: string }, tx?: Tx): Promise<void> {
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
   * a retried send.
   */
  @GenerateSql(
    { name: 'new context', params: [PAIR, DummyValue.STRING, { a: 1 }, null] },
    { name: 'in a context', params: [PAIR, DummyValue.STRING, null, U] },
  )
  async createTask(
    pair: TaskPair,
    originMessageId: string,
    metadata: Record<string, unknown> | null,
    contextId: string | null,
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
    const row = await this.db.one<Partial<TaskRow> & { context_row: string }>(
      sql`
      WITH c AS (${context}),
      t AS (
        INSERT INTO tasks AS t (id, context_id, requester_identity_id, requester_handle, requester_organization_id,
                                worker_identity_id, worker_handle, worker_organization_id, origin_message_id, metadata)
        SELECT ${newRowId()}, c.id, ${r.id}, ${r.handle}, ${r.organizationId}, ${w.id}, ${w.handle}, ${w.organizationId}, ${originMessageId}, ${json(metadata)}::jsonb FROM c
        ON CONFLICT (requester_identity_id, worker_identity_id, origin_message_id) DO NOTHING
        RETURNING ${TASK_COLUMNS}
      )${touch}
      SELECT c.id AS context_row, t.* FROM c LEFT JOIN t ON true`,
      tx,
    );
    if (!row) return { kind: 'no_context' };
    if (!row.id) return { kind: 'duplicate', newContextId: contextId === null ? row.context_row : null };
    const { context_row: _, ...task } = row;
    return { kind: 'created', row: task as TaskRow };
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
      params: [DummyValue.BATCH, EXAMPLE_TASK, EXAMPLE_FIRST_MESSAGE, DummyValue.STRING, true, null],
    },
    {
      name: 'in a context',
      params: [DummyValue.BATCH, EXAMPLE_TASK, EXAMPLE_FIRST_MESSAGE, DummyValue.STRING, false, null],
    },
  )
  async queueNewTask(
    batch: WriteBatch,
    task: TaskRow,
    message: MessageRecord,
    originMessageId: string,
    newContext: boolean,
    traceId: string | null,
  ): Promise<void> {
    const at = task.created_at;
    // The pair, as both the context's and the task's columns list it.
    const pair = [
      task.requester_identity_id,
      task.requester_handle,
      task.requester_organization_id,
      task.worker_identity_id,
      task.worker_handle,
      task.worker_organization_id,
    ];
    await this.db.write(
      [
        newContext
          ? NEW_CONTEXT.of({ c: [[task.context_id, ...pair, at]] })
          : sql`UPDATE contexts SET updated_at = ${at}
                 WHERE id = ${task.context_id} AND requester_identity_id = ${task.requester_identity_id} AND worker_identity_id = ${task.worker_identity_id}`,
        NEW_TASK.of({
          t: [
            [
              task.id,
              task.context_id,
              ...pair,
              originMessageId,
              json(task.metadata),
              task.state,
              task.status_message_id,
              task.status_timestamp,
              task.seq,
              at,
              task.updated_at,
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
  async saveTask(task: TaskRow, unit: Tx | WriteBatch): Promise<void> {
    await this.db.write(
      [
        sql`
        UPDATE tasks SET state = ${task.state}, status_message_id = ${task.status_message_id}, seq = ${task.seq},
               updated_at = ${task.updated_at}, status_timestamp = ${task.status_timestamp}
         WHERE id = ${task.id}
        RETURNING pg_notify(${CHANGES_CHANNEL}, ${`${task.id}:${task.seq}`}) AS notified`,
      ],
      unit,
    );
  }

  // ---- a journal's changes (under the task's row lock)

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

  // ---- reads of messages, artifacts and events

  /**
   * Turns task rows into records: their status messages, latest history and artifacts,
   * read together in one statement (none when nothing beyond the rows is asked for).
   */
  @GenerateSql({ params: [[EXAMPLE_TASK], { historyLength: 2, artifacts: true, maxArtifactBytes: 1000 }] })
  async hydrate(rows: TaskRow[], options: HydrateOptions, tx?: Tx): Promise<TaskRecord[]> {
    if (rows.length === 0) return [];
    const needed = rows.some((row) => row.status_message_id !== null) || options.historyLength > 0 || options.artifacts;
    if (!needed) return toRecords(rows, [], options);
    const parts = await this.db.rows<TaskPart>(
      sql`
        WITH t AS (
          SELECT * FROM ${sql.rows(
            't',
            HYDRATED_COLUMNS,
            rows.map((row) => [row.id, row.status_message_id]),
          )})
        ${partsOf(options)}`,
      tx,
    );
    return toRecords(rows, parts, options);
  }

  /** One of the pair's tasks as a record (findRecord), or null. */
  @GenerateSql({ params: [U, PAIR, { historyLength: 2, artifacts: true, maxArtifactBytes: 1000 }] })
  async pairTaskRecord(taskId: string, pair: TaskPair, options: HydrateOptions): Promise<TaskRecord | null> {
    return findRecord(this.db, taskId, ofPair(pair), options);
  }

  /** A task as a record (findRecord), when visible to `side`; null otherwise. */
  @GenerateSql({ params: [U, ORGANIZATION_SIDE, { historyLength: 2, artifacts: true, maxArtifactBytes: 1000 }] })
  async visibleTaskRecord(taskId: string, side: LedgerSide, options: HydrateOptions): Promise<TaskRecord | null> {
    return findRecord(this.db, taskId, visibleCondition('t', side, {}), options);
  }

  /**
   * The task's events after `afterSeq`, in order (at most `limit`: events carry their
   * messages, which may be large, so a stream catching up reads in modest batches).
   */
  @GenerateSql({ params: [{ id: U, contextId: U }, 0, 100] })
  async events(task: { id: string; contextId: string }, afterSeq: number, limit = 100): Promise<TaskEventRecord[]> {
    const rows = await this.db.rows<
      MessageRow & {
        event_seq: number;
        kind: TaskEventKind;
        state: TaskState;
        artifact: ArtifactChunk | null;
        event_created_at: Date;
      }
    >(sql`
      SELECT e.seq AS event_seq, e.kind, e.state, e.artifact, e.created_at AS event_created_at, ${MESSAGE_COLUMNS}
        FROM task_events e LEFT JOIN messages m ON m.id = e.message_id
       WHERE e.task_id = ${task.id} AND e.seq > ${afterSeq}
       ORDER BY e.seq LIMIT ${limit}`);
    return rows.map((row) => ({
      seq: row.event_seq,
      kind: row.kind,
      state: row.state,
      message: row.id ? messageRecord(row, task.contextId) : null,
      artifact: row.artifact,
      createdAt: row.event_created_at,
    }));
  }

  /** A page of the task's messages, newest first (`page` ordered by MESSAGES_NEWEST_FIRST, aliased `m`). */
  @GenerateSql({
    name: 'first page',
    params: [{ id: U, contextId: U }, new Keyset('m', undefined, 50, MESSAGES_NEWEST_FIRST)],
  })
  async messagePage(task: { id: string; contextId: string }, page: Keyset): Promise<MessageRecord[]> {
    // The cursor names the last message shown; the next page continues below its place in the history.
    const after = page.cursor
      ? sql`m.seq < (SELECT seq FROM messages WHERE task_id = ${task.id} AND id = ${page.cursor.id}::uuid)`
      : sql`TRUE`;
    const rows = await this.db.rows<MessageRow>(
      sql`SELECT ${MESSAGE_COLUMNS} FROM messages m WHERE m.task_id = ${task.id} AND ${after} ${page.tail}`,
    );
    return rows.map((row) => messageRecord(row, task.contextId));
  }

  /** The requester's message with this id on the task, as stored. */
  @GenerateSql({ params: [U, DummyValue.STRING] })
  async requesterMessage(taskId: string, messageId: string): Promise<NewMessage | null> {
    const row = await this.db.one<
      Pick<MessageRow, 'message_id' | 'parts' | 'metadata' | 'extensions' | 'reference_task_ids'>
    >(sql`
      SELECT message_id, parts, metadata, extensions, reference_task_ids FROM messages
       WHERE task_id = ${taskId} AND message_id = ${messageId} AND role = 'user'`);
    return row
      ? {
          messageId: row.message_id,
          parts: row.parts,
          metadata: row.metadata,
          extensions: row.extensions,
          referenceTaskIds: row.reference_task_ids,
        }
      : null;
  }

  // ---- contexts

  /** A page of the contexts visible to `side`, newest first. */
  @GenerateSql(
    { name: 'one role', params: [IDENTITY_SIDE, { role: 'requester', peer: U2 }, new Keyset('c', undefined, 50)] },
    { name: 'either role', params: [IDENTITY_SIDE, {}, new Keyset('c', undefined, 50)] },
  )
  async visibleContexts(side: LedgerSide, filter: SideFilter, page: Keyset): Promise<ContextRecord[]> {
    const rows = await this.db.rows<ContextRow>(
      visiblePage(
        side,
        filter,
        page,
        (...visible) =>
          sql`SELECT ${CONTEXT_COLUMNS} FROM contexts c ${sql.where([...visible, page.after])} ${page.tail}`,
      ),
    );
    return rows.map(contextRecord);
  }

  /** A context, when visible to `side`. */
  @GenerateSql({ params: [U, ORGANIZATION_SIDE] })
  async visibleContext(contextId: string, side: LedgerSide): Promise<ContextRecord | null> {
    const row = await this.db.one<ContextRow>(sql`
      SELECT ${CONTEXT_COLUMNS} FROM contexts c WHERE c.id = ${contextId} AND ${visibleCondition('c', side, {})}`);
    return row ? contextRecord(row) : null;
  }

  // ---- push notification configs

  /** How many configs the task has besides `configId`. */
  @GenerateSql({ params: [U, DummyValue.STRING] })
  async countOtherPushConfigs(taskId: string, configId: string, tx?: Tx): Promise<number> {
    const row = await this.db.one<{ others: number }>(
      sql`
      SELECT count(*)::int AS others FROM push_notification_configs WHERE task_id = ${taskId} AND config_id <> ${configId}`,
      tx,
    );
    return row!.others;
  }

  /** Creates the config, or replaces the task's config with that id. */
  @GenerateSql({
    params: [
      U,
      DummyValue.STRING,
      U,
      { id: DummyValue.STRING, url: 'https://example.com/hook', token: '', authentication: null },
      '1.0',
    ],
  })
  async putPushConfig(
    taskId: string,
    configId: string,
    ownerIdentityId: string,
    input: PushConfigInput,
    version: A2AVersion,
    tx?: Tx,
  ): Promise<PushConfigRecord> {
    const row = await this.db.one<PushConfigRow>(
      sql`
      INSERT INTO push_notification_configs (task_id, config_id, owner_identity_id, url, token, authentication, protocol_version)
      VALUES (${taskId}, ${configId}, ${ownerIdentityId}, ${input.url}, ${input.token || null},
              ${input.authentication ? JSON.stringify(input.authentication) : null}::jsonb, ${version})
      ON CONFLICT (task_id, config_id) DO UPDATE
         SET url = EXCLUDED.url, token = EXCLUDED.token, authentication = EXCLUDED.authentication,
             protocol_version = EXCLUDED.protocol_version, updated_at = now()
      RETURNING task_id, config_id, url, token, authentication, protocol_version`,
      tx,
    );
    return pushConfigRecord(row!);
  }

  /** The task's configs (the one with `configId`, when given), oldest first. */
  @GenerateSql({ name: 'all', params: [U, null] }, { name: 'one', params: [U, DummyValue.STRING] })
  async pushConfigs(taskId: string, configId: string | null): Promise<PushConfigRecord[]> {
    const one = configId === null ? sql.empty : sql`AND config_id = ${configId}`;
    const rows = await this.db.rows<PushConfigRow>(sql`
      SELECT task_id, config_id, url, token, authentication, protocol_version FROM push_notification_configs
       WHERE task_id = ${taskId} ${one} ORDER BY created_at, config_id`);
    return rows.map(pushConfigRecord);
  }

  @GenerateSql({ params: [U, DummyValue.STRING] })
  async deletePushConfig(taskId: string, configId: string, tx?: Tx): Promise<void> {
    await this.db.execute(
      sql`DELETE FROM push_notification_configs WHERE task_id = ${taskId} AND config_id = ${configId}`,
      tx,
    );
  }

  // ---- idempotency keys

  /**
   * Claims the key: inserts it, or takes over one older than `ttlHours`. False when a
   * live claim exists (a concurrent claim waits on the unique index until the first
   * one commits or rolls back).
   */
  @GenerateSql({ params: [DummyValue.STRING, DummyValue.STRING, DummyValue.BUFFER, 24] })
  async claimIdempotencyKey(
    scope: string,
    key: string,
    requestHash: Buffer,
    ttlHours: number,
    tx?: Tx,
  ): Promise<boolean> {
    const rows = await this.db.rows(
      sql`
      INSERT INTO idempotency_keys (scope, key, request_hash) VALUES (${scope}, ${key}, ${requestHash})
      ON CONFLICT (scope, key) DO UPDATE
         SET request_hash = EXCLUDED.request_hash, response_status = NULL, response_body = NULL, created_at = now()
       WHERE idempotency_keys.created_at < now() - make_interval(hours => ${ttlHours})
      RETURNING key`,
      tx,
    );
    return rows.length > 0;
  }

  @GenerateSql({ params: [DummyValue.STRING, DummyValue.STRING] })
  async idempotencyKey(scope: string, key: string, tx?: Tx): Promise<IdempotencyRow | null> {
    return this.db.one<IdempotencyRow>(
      sql`
      SELECT request_hash, response_status, response_body FROM idempotency_keys WHERE scope = ${scope} AND key = ${key}`,
      tx,
    );
  }

  @GenerateSql({ params: [DummyValue.STRING, DummyValue.STRING, 200, { ok: true }] })
  async recordIdempotentResponse(scope: string, key: string, status: number, body: unknown, tx?: Tx): Promise<void> {
    await this.db.execute(
      sql`
      UPDATE idempotency_keys SET response_status = ${status}, response_body = ${JSON.stringify(body)}::jsonb
       WHERE scope = ${scope} AND key = ${key}`,
      tx,
    );
  }

  /**
   * Retention (src/retention): deletes up to `batch` keys older than `ttlHours` (they are
   * never replayed again); how many went.
   */
  @GenerateSql({ params: [24, 500] })
  async pruneIdempotencyKeys(ttlHours: number, batch: number): Promise<number> {
    return this.db.execute(sql`
      DELETE FROM idempotency_keys WHERE (scope, key) IN (
        SELECT scope, key FROM idempotency_keys WHERE created_at < now() - make_interval(hours => ${ttlHours}::int)
         LIMIT ${batch} FOR UPDATE SKIP LOCKED)`);
  }
}

/** The pair's tasks: its two identities on their sides (over `tasks t`). */
function ofPair(pair: TaskPair): Sql {
  return sql`t.requester_identity_id = ${pair.requester.id} AND t.worker_identity_id = ${pair.worker.id}`;
}

/** The tasks `hydrate` reads the parts of (its `sql.rows`, declared once). */
const HYDRATED_COLUMNS = [
  ['task_id', 'uuid'],
  ['status_id', 'uuid'],
] as const;

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
function taskByKey(taskId: string, { lock = false } = {}): Sql {
  return sql`(SELECT * FROM tasks WHERE id = ${taskId} OFFSET 0${lock ? sql` FOR UPDATE` : sql.empty}) t`;
}

/**
 * A keyset page of the rows visible to `side`; `select` turns the visibility
 * conditions into one ordered, limited statement (over the page's alias). With a
 * role, one walk of that role's index. With either role, one page per role, each
 * read in order from its own index, then merged: a single `requester = x OR worker = x`
 * reads and sorts every row of the caller — 10,682 pages and 10 ms for a page of a
 * caller's 20,000 contexts in a ledger of a million (BENCHMARKS.md). A row on both
 * sides (an organization's own tasks, an identity's tasks to itself) is kept once
 * (mergedPage).
 */
function visiblePage(side: LedgerSide, filter: SideFilter, page: Keyset, select: (...visible: Sql[]) => Sql): Sql {
  const alias = page.alias;
  if (filter.role) return select(visibleCondition(alias, side, filter));
  return mergedPage(
    page,
    select(visibleCondition(alias, side, { ...filter, role: 'requester' })),
    select(visibleCondition(alias, side, { ...filter, role: 'worker' })),
  );
}

function pairTaskWhere(pair: TaskPair, filter: PairTaskFilter): Sql {
  return sql.join(
    [
      ofPair(pair),
      filter.contextId !== undefined ? sql`t.context_id = ${filter.contextId}` : sql.empty,
      filter.state ? sql`t.state = ${filter.state}` : sql.empty,
      filter.statusAfter ? sql`t.status_timestamp >= ${filter.statusAfter}` : sql.empty,
    ],
    ' AND ',
  );
}

function messageRecord(m: MessageRow, contextId: string): MessageRecord {
  return {
    rowId: m.id,
    messageId: m.message_id,
    taskId: m.task_id,
    contextId,
    role: m.role,
    parts: m.parts,
    metadata: m.metadata,
    extensions: m.extensions,
    referenceTaskIds: m.reference_task_ids,
    seq: m.seq,
    createdAt: m.created_at,
  };
}

function contextRecord(row: ContextRow): ContextRecord {
  return { id: row.id, ...participantsOf(row), createdAt: row.created_at, updatedAt: row.updated_at };
}

function pushConfigRecord(row: PushConfigRow): PushConfigRecord {
  return {
    taskId: row.task_id,
    id: row.config_id,
    url: row.url,
    token: row.token ?? '',
    authentication: row.authentication,
    protocolVersion: row.protocol_version,
  };
}

/**
 * The task with this id, when it also meets `where` (over `tasks t`), as a record with
 * its parts: the row, its status message, history and artifacts in one statement — a
 * read of one task is one round trip. Null when there is no such task.
 */
async function findRecord(
  db: Database,
  taskId: string,
  where: Sql,
  options: HydrateOptions,
): Promise<TaskRecord | null> {
  const parts = await db.rows<TaskPart | { part: 'task'; row: JsonRow<TaskRow> }>(
    sql`
    WITH found AS (SELECT ${TASK_COLUMNS} FROM ${taskByKey(taskId)} WHERE ${where}),
         t AS (SELECT id AS task_id, status_message_id AS status_id FROM found)
    SELECT 'task' AS part, to_jsonb(found) AS row FROM found
    UNION ALL
    ${partsOf(options)}`,
  );
  const found = parts.find((part) => part.part === 'task');
  if (!found) return null;
  const row = found.row as JsonRow<TaskRow>;
  const task: TaskRow = {
    ...row,
    status_timestamp: new Date(row.status_timestamp),
    created_at: new Date(row.created_at),
    updated_at: new Date(row.updated_at),
  };
  return toRecords(
    [task],
    parts.filter((part): part is TaskPart => part.part !== 'task'),
    options,
  )[0];
}

/** A task's status message, one of its latest messages, or an artifact, as partsOf reads them. */
type TaskPart =
  { part: 'status' | 'history'; row: JsonRow<MessageRow> } | { part: 'artifact'; row: ArtifactRow & { seq: number } };

/**
 * The parts of the tasks of a CTE `t` (task_id, status_id): per task, its status
 * message, the latest n messages from the (task_id, seq) index (older ones are never
 * read), and the artifacts as long as their running size stays within the maximum.
 */
function partsOf(options: HydrateOptions): Sql {
  return sql`SELECT 'status' AS part, to_jsonb(s) AS row
          FROM (SELECT ${MESSAGE_COLUMNS} FROM t JOIN messages m ON m.id = t.status_id) s
        UNION ALL
        SELECT 'history', to_jsonb(h) FROM t
          CROSS JOIN LATERAL (
            SELECT ${MESSAGE_COLUMNS} FROM messages m
             WHERE m.task_id = t.task_id AND ${options.historyLength}::int > 0
             ORDER BY m.seq DESC LIMIT ${options.historyLength}
          ) h
        UNION ALL
        SELECT 'artifact', to_jsonb(a) FROM t
          CROSS JOIN LATERAL (
            SELECT sized.task_id, sized.artifact_id, sized.name, sized.description, sized.parts, sized.metadata, sized.seq
              FROM (SELECT task_id, artifact_id, name, description, parts, metadata, seq,
                           sum(content_bytes) OVER (ORDER BY seq, artifact_id) AS running
                      FROM artifacts WHERE ${options.artifacts} AND task_id = t.task_id) sized
             WHERE ${options.maxArtifactBytes ?? null}::float8 IS NULL OR sized.running <= ${options.maxArtifactBytes ?? null}::float8
          ) a`;
}

/** Task rows and their parts (partsOf) as records. */
function toRecords(rows: TaskRow[], parts: readonly TaskPart[], options: HydrateOptions): TaskRecord[] {
  const contextOf = new Map(rows.map((row) => [row.id, row.context_id]));
  const toRecord = (m: MessageRow) => messageRecord(m, contextOf.get(m.task_id)!);
  const statusById = new Map<string, MessageRecord>();
  const history = new Map<string, MessageRecord[]>();
  const artifacts = new Map<string, ArtifactRecord[]>();
  for (const { part, row } of parts) {
    if (part === 'artifact') continue;
    const message = toRecord({ ...row, created_at: new Date(row.created_at) } as MessageRow);
    if (part === 'status') statusById.set(message.rowId, message);
    else push(history, message.taskId, message);
  }
  for (const list of history.values()) list.sort((a, b) => a.seq - b.seq);
  const artifactRows = parts.flatMap((p) => (p.part === 'artifact' ? [p.row] : []));
  artifactRows.sort((a, b) => a.seq - b.seq || (a.artifact_id < b.artifact_id ? -1 : 1));
  for (const a of artifactRows) {
    push(artifacts, a.task_id, {
      artifactId: a.artifact_id,
      name: a.name,
      description: a.description,
      parts: a.parts,
      metadata: a.metadata,
    });
  }
  return rows.map((row) => ({
    id: row.id,
    contextId: row.context_id,
    ...participantsOf(row),
    state: row.state,
    statusMessage: row.status_message_id ? (statusById.get(row.status_message_id) ?? null) : null,
    statusTimestamp: row.status_timestamp,
    metadata: row.metadata,
    seq: row.seq,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    history: history.get(row.id) ?? [],
    artifacts: options.artifacts ? (artifacts.get(row.id) ?? []) : null,
  }));
}

function push<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
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
