import { Injectable } from '@nestjs/common';
import { visibleCondition, type LedgerSide, type SideFilter } from '../auth/access';
import { Keyset, type KeysetOrder, NEWEST_FIRST } from '../common/pagination';
import { Database, type Tx } from '../database/database';
import { DummyValue, GenerateSql } from '../database/generate-sql';
import type { JsonRow, RowOf } from '../database/row';
import { sql, type Sql } from '../database/sql';
import { mergedPage } from '../database/merged-page';
import type { Artifact } from './entities/artifact.entity';
import type { TaskContext } from './entities/context.entity';
import type { ArtifactChunk, TaskEventKind } from './entities/task-event.entity';
import type { TaskMessage } from './entities/task-message.entity';
import type { Task } from './entities/task.entity';
import {
  type ArtifactRecord,
  type ContextRecord,
  type HydrateOptions,
  type MessageRecord,
  type NewMessage,
  type TaskEventRecord,
  type TaskHead,
  type TaskPair,
  type TaskRecord,
  type UpstreamIds,
} from './task-records';
import { participantsOf, taskHeadOf, taskHeadOfJson, type ParticipantRow, type TaskRow } from './task-rows';
import type { TaskState } from './task-state';
import { ofPair, TASK_COLUMNS, taskByKey } from './ledger.repository';
import { EXAMPLE_TASK, PAIR, U, U2 } from './sql-examples';

const MESSAGE_COLUMNS = sql.raw(
  'm.id, m.task_id, m.message_id, m.role, m.parts, m.metadata, m.extensions, m.reference_task_ids, m.seq, m.created_at',
);

const CONTEXT_COLUMNS = sql.raw(`c.id, c.requester_identity_id, c.requester_handle, c.requester_organization_id,
  c.worker_identity_id, c.worker_handle, c.worker_organization_id, c.created_at, c.updated_at`);

type MessageRow = RowOf<TaskMessage>;

type ContextRow = Pick<RowOf<TaskContext>, 'id' | 'created_at' | 'updated_at'> & ParticipantRow;

type ArtifactRow = Pick<RowOf<Artifact>, 'task_id' | 'artifact_id' | 'name' | 'description' | 'parts' | 'metadata'>;

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
  skill?: string;
  updatedAfter?: string;
}

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

const ORGANIZATION_SIDE: LedgerSide = { kind: 'organization', organizationId: U };

const IDENTITY_SIDE: LedgerSide = { kind: 'identity', identityId: U };

/**
 * The ledger's reads: tasks as records (each with its status message, latest history
 * and artifacts, in one statement), pages of tasks, messages and contexts, and a task's
 * events. Every statement on tasks, contexts, messages, task_events and artifacts that
 * writes is LedgerRepository's.
 */
@Injectable()
export class TaskReadsRepository {
  constructor(private readonly db: Database) {}

  /** A task by its id alone as a record (findRecord): the service's own reads, never on behalf of a caller. */
  @GenerateSql({ params: [U, { historyLength: 0, artifacts: true, maxArtifactBytes: 1000 }] })
  async taskRecord(taskId: string, options: HydrateOptions, tx?: Tx): Promise<TaskRecord | null> {
    return findRecord(this.db, taskId, sql`TRUE`, options, tx);
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
  async pairTasks(pair: TaskPair, filter: PairTaskFilter, page: Keyset): Promise<TaskHead[]> {
    const rows = await this.db.rows<TaskRow>(
      sql`SELECT ${TASK_COLUMNS} FROM tasks t WHERE ${pairTaskWhere(pair, filter)} AND ${page.after} ${page.tail}`,
    );
    return rows.map(taskHeadOf);
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
    {
      name: 'skill',
      params: [
        IDENTITY_SIDE,
        { role: 'worker', identity: U, skill: DummyValue.STRING },
        new Keyset('t', undefined, 50),
      ],
    },
  )
  async visibleTasks(side: LedgerSide, filter: VisibleTaskFilter, page: Keyset): Promise<TaskHead[]> {
    const rest = [
      filter.state ? sql`t.state = ${filter.state}` : sql.empty,
      filter.contextId ? sql`t.context_id = ${filter.contextId}::uuid` : sql.empty,
      filter.skill ? sql`t.skill = ${filter.skill}` : sql.empty,
      filter.updatedAfter ? sql`t.updated_at > ${filter.updatedAfter}::timestamptz` : sql.empty,
      page.after,
    ];
    const rows = await this.db.rows<TaskRow>(
      visiblePage(
        'tasks',
        side,
        filter,
        page,
        (...visible) => sql`SELECT ${TASK_COLUMNS} FROM tasks t ${sql.where([...visible, ...rest])} ${page.tail}`,
      ),
    );
    return rows.map(taskHeadOf);
  }

  /** A context's most recent tasks visible to `side` (the worker's side sees none held). */
  @GenerateSql({ params: [U, ORGANIZATION_SIDE, 200] })
  async contextTasks(contextId: string, side: LedgerSide, limit: number): Promise<TaskHead[]> {
    const rows = await this.db.rows<TaskRow>(sql`
      SELECT ${TASK_COLUMNS} FROM tasks t WHERE t.context_id = ${contextId} AND ${visibleCondition('t', side, {}, UNHELD.tasks('t'))}
       ORDER BY t.created_at DESC, t.id DESC LIMIT ${limit}`);
    return rows.map(taskHeadOf);
  }

  /** The upstream ids of those of these tasks that were forwarded and answered, by task id. */
  @GenerateSql({ params: [[U]] })
  async upstreamIds(taskIds: readonly string[]): Promise<Map<string, UpstreamIds>> {
    if (taskIds.length === 0) {
      return new Map();
    }
    const rows = await this.db.rows<Pick<RowOf<Task>, 'id' | 'upstream_task_id' | 'upstream_context_id'>>(sql`
      SELECT id, upstream_task_id, upstream_context_id FROM tasks
       WHERE id = ANY(${[...taskIds]}::uuid[]) AND upstream_task_id IS NOT NULL`);
    return new Map(
      rows.map((row) => [row.id, { taskId: row.upstream_task_id!, contextId: row.upstream_context_id ?? '' }]),
    );
  }

  /**
   * Turns task heads into records: their status messages, latest history and artifacts,
   * read together in one statement (none when nothing beyond the rows is asked for).
   */
  @GenerateSql({ params: [[EXAMPLE_TASK], { historyLength: 2, artifacts: true, maxArtifactBytes: 1000 }] })
  async hydrate(heads: TaskHead[], options: HydrateOptions, tx?: Tx): Promise<TaskRecord[]> {
    if (heads.length === 0) {
      return [];
    }
    const needed =
      heads.some((head) => head.statusMessageId !== null) || options.historyLength > 0 || options.artifacts;
    if (!needed) {
      return toRecords(heads, [], options);
    }
    const parts = await this.db.rows<TaskPart>(
      sql`
        WITH t AS (
          SELECT * FROM ${sql.rows(
            't',
            HYDRATED_COLUMNS,
            heads.map((head) => [head.id, head.statusMessageId]),
          )})
        ${partsOf(options)}`,
      tx,
    );
    return toRecords(heads, parts, options);
  }

  /** One of the pair's tasks as a record (findRecord), or null. */
  @GenerateSql({ params: [U, PAIR, { historyLength: 2, artifacts: true, maxArtifactBytes: 1000 }] })
  async pairTaskRecord(taskId: string, pair: TaskPair, options: HydrateOptions): Promise<TaskRecord | null> {
    return findRecord(this.db, taskId, ofPair(pair), options);
  }

  /** A task as a record (findRecord), when visible to `side`; null otherwise. */
  @GenerateSql({ params: [U, ORGANIZATION_SIDE, { historyLength: 2, artifacts: true, maxArtifactBytes: 1000 }] })
  async visibleTaskRecord(taskId: string, side: LedgerSide, options: HydrateOptions): Promise<TaskRecord | null> {
    return findRecord(this.db, taskId, visibleCondition('t', side, {}, UNHELD.tasks('t')), options);
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

  /** Each task's first message (the requester's, which created it), by task id. */
  @GenerateSql({ params: [[U]] })
  async firstMessages(taskIds: readonly string[], tx?: Tx): Promise<Map<string, MessageRecord>> {
    if (taskIds.length === 0) {
      return new Map();
    }
    const rows = await this.db.rows<MessageRow & { context_id: string }>(
      sql`
      SELECT ${MESSAGE_COLUMNS}, t.context_id FROM tasks t
        CROSS JOIN LATERAL (SELECT * FROM messages m WHERE m.task_id = t.id ORDER BY m.seq LIMIT 1) m
       WHERE t.id = ANY(${[...taskIds]}::uuid[])`,
      tx,
    );
    return new Map(rows.map((row) => [row.task_id, messageRecord(row, row.context_id)]));
  }

  /** A page of the contexts visible to `side`, newest first. */
  @GenerateSql(
    { name: 'one role', params: [IDENTITY_SIDE, { role: 'requester', peer: U2 }, new Keyset('c', undefined, 50)] },
    { name: 'either role', params: [IDENTITY_SIDE, {}, new Keyset('c', undefined, 50)] },
  )
  async visibleContexts(side: LedgerSide, filter: SideFilter, page: Keyset): Promise<ContextRecord[]> {
    const rows = await this.db.rows<ContextRow>(
      visiblePage(
        'contexts',
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
      SELECT ${CONTEXT_COLUMNS} FROM contexts c WHERE c.id = ${contextId} AND ${visibleCondition('c', side, {}, UNHELD.contexts('c'))}`);
    return row ? contextRecord(row) : null;
  }
}

/**
 * What the worker's side needs of a row besides its columns (visibleCondition): a task
 * not held for approval (docs/api.md §16), a context with a task that is not (every
 * context has its first task, so a context of held tasks alone tells of a first contact).
 */
const UNHELD = {
  tasks: (alias: string) => sql.raw(`NOT ${alias}.held`),
  contexts: (alias: string) =>
    sql.raw(`EXISTS (SELECT 1 FROM tasks unheld WHERE unheld.context_id = ${alias}.id AND NOT unheld.held)`),
};

/** The tasks `hydrate` reads the parts of (its `sql.rows`, declared once). */
const HYDRATED_COLUMNS = [
  ['task_id', 'uuid'],
  ['status_id', 'uuid'],
] as const;

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
function visiblePage(
  rows: 'tasks' | 'contexts',
  side: LedgerSide,
  filter: SideFilter,
  page: Keyset,
  select: (...visible: Sql[]) => Sql,
): Sql {
  const alias = page.alias;
  if (filter.role) {
    return select(visibleCondition(alias, side, filter, UNHELD[rows](alias)));
  }
  return mergedPage(
    page,
    select(visibleCondition(alias, side, { ...filter, role: 'requester' }, UNHELD[rows](alias))),
    select(visibleCondition(alias, side, { ...filter, role: 'worker' }, UNHELD[rows](alias))),
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
  tx?: Tx,
): Promise<TaskRecord | null> {
  const parts = await db.rows<TaskPart | { part: 'task'; row: JsonRow<TaskRow> }>(
    sql`
    WITH found AS (SELECT ${TASK_COLUMNS} FROM ${taskByKey(taskId)} WHERE ${where}),
         t AS (SELECT id AS task_id, status_message_id AS status_id FROM found)
    SELECT 'task' AS part, to_jsonb(found) AS row FROM found
    UNION ALL
    ${partsOf(options)}`,
    tx,
  );
  const found = parts.find((part) => part.part === 'task');
  if (!found) {
    return null;
  }
  return toRecords(
    [taskHeadOfJson(found.row as JsonRow<TaskRow>)],
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
function toRecords(heads: TaskHead[], parts: readonly TaskPart[], options: HydrateOptions): TaskRecord[] {
  const contextOf = new Map(heads.map((head) => [head.id, head.contextId]));
  const toRecord = (m: MessageRow) => messageRecord(m, contextOf.get(m.task_id)!);
  const statusById = new Map<string, MessageRecord>();
  const history = new Map<string, MessageRecord[]>();
  const artifacts = new Map<string, ArtifactRecord[]>();
  for (const { part, row } of parts) {
    if (part === 'artifact') {
      continue;
    }
    const message = toRecord({ ...row, created_at: new Date(row.created_at) } as MessageRow);
    if (part === 'status') {
      statusById.set(message.rowId, message);
    } else {
      push(history, message.taskId, message);
    }
  }
  for (const list of history.values()) {
    list.sort((a, b) => a.seq - b.seq);
  }
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
  return heads.map(({ statusMessageId, ...head }) => ({
    ...head,
    statusMessage: statusMessageId ? (statusById.get(statusMessageId) ?? null) : null,
    history: history.get(head.id) ?? [],
    artifacts: options.artifacts ? (artifacts.get(head.id) ?? []) : null,
  }));
}

function push<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list) {
    list.push(value);
  } else {
    map.set(key, [value]);
  }
}
