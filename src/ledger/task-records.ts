import type { EntityManager } from 'typeorm';
import type { ArtifactChunk, TaskEventKind } from './entities/task-event.entity';
import type { MessageRole } from './entities/task-message.entity';
import type { StoredPart } from './parts';
import type { TaskState } from './task-state';

/**
 * What the ledger hands to the rest of the service: plain records, protocol-neutral
 * (parts in the stored A2A v1.0 JSON form). The protocol maps them to the SDK's
 * types, the REST API to its views. Reads take an EntityManager so that they work
 * inside a transaction as well as outside one.
 */
export interface Participant {
  id: string;
  handle: string;
  organizationId: string;
}

export interface MessageRecord {
  /** messages.id */
  rowId: string;
  /** The A2A messageId. */
  messageId: string;
  taskId: string;
  contextId: string;
  role: MessageRole;
  parts: StoredPart[];
  metadata: Record<string, unknown> | null;
  extensions: string[];
  referenceTaskIds: string[];
  seq: number;
  createdAt: Date;
}

export interface ArtifactRecord {
  artifactId: string;
  name: string;
  description: string;
  parts: StoredPart[];
  metadata: Record<string, unknown> | null;
}

export interface TaskRecord {
  id: string;
  contextId: string;
  requester: Participant;
  worker: Participant;
  state: TaskState;
  /** The agent message that came with the current status. */
  statusMessage: MessageRecord | null;
  statusTimestamp: Date;
  metadata: Record<string, unknown> | null;
  /** Number of the last event: a stream that starts here continues after it. */
  seq: number;
  createdAt: Date;
  updatedAt: Date;
  /** Oldest first; the most recent `historyLength` when one was asked for. */
  history: MessageRecord[];
  /** Null when the read did not ask for artifacts. */
  artifacts: ArtifactRecord[] | null;
}

export interface TaskEventRecord {
  seq: number;
  kind: TaskEventKind;
  /** The task's state after the event. */
  state: TaskState;
  message: MessageRecord | null;
  artifact: ArtifactChunk | null;
  createdAt: Date;
}

/** The participant columns that tasks and contexts share. */
export interface ParticipantRow {
  requester_identity_id: string;
  requester_handle: string;
  requester_organization_id: string;
  worker_identity_id: string;
  worker_handle: string;
  worker_organization_id: string;
}

export function participantsOf(row: ParticipantRow): { requester: Participant; worker: Participant } {
  return {
    requester: { id: row.requester_identity_id, handle: row.requester_handle, organizationId: row.requester_organization_id },
    worker: { id: row.worker_identity_id, handle: row.worker_handle, organizationId: row.worker_organization_id },
  };
}

export interface TaskRow extends ParticipantRow {
  id: string;
  context_id: string;
  state: TaskState;
  status_message_id: string | null;
  status_timestamp: Date;
  metadata: Record<string, unknown> | null;
  seq: number;
  created_at: Date;
  updated_at: Date;
}

interface MessageRow {
  id: string;
  task_id: string;
  message_id: string;
  role: MessageRole;
  parts: StoredPart[];
  metadata: Record<string, unknown> | null;
  extensions: string[];
  reference_task_ids: string[];
  seq: number;
  created_at: Date;
}

export const TASK_COLUMNS = `t.id, t.context_id, t.requester_identity_id, t.requester_handle, t.requester_organization_id,
  t.worker_identity_id, t.worker_handle, t.worker_organization_id, t.state, t.status_message_id, t.status_timestamp,
  t.metadata, t.seq, t.created_at, t.updated_at`;

const MESSAGE_COLUMNS = 'm.id, m.task_id, m.message_id, m.role, m.parts, m.metadata, m.extensions, m.reference_task_ids, m.seq, m.created_at';

export interface HydrateOptions {
  /**
   * The n most recent messages (0: none). Required: no read loads a task's whole
   * history, which may be long (LEDGER_MAX_HISTORY bounds what callers ask for).
   */
  historyLength: number;
  artifacts: boolean;
  /**
   * At most this much artifact content per task (LEDGER_MAX_ARTIFACT_BYTES_PER_TASK,
   * set by the services): whole artifacts, in order, while they fit. Writes keep every
   * task within it; this bounds a read of a task written before the limit existed.
   */
  maxArtifactBytes?: number;
}

/** Turns task rows into records: status messages, history and artifacts in three queries at most. */
export async function hydrateTasks(em: EntityManager, rows: TaskRow[], options: HydrateOptions): Promise<TaskRecord[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((row) => row.id);
  const contextOf = new Map(rows.map((row) => [row.id, row.context_id]));
  const toRecord = (m: MessageRow) => messageRecord(m, contextOf.get(m.task_id)!);

  const statusIds = rows.map((row) => row.status_message_id).filter((id): id is string => id !== null);
  const statusMessages = statusIds.length === 0 ? [] : ((await em.query(
    `SELECT ${MESSAGE_COLUMNS} FROM messages m WHERE m.id = ANY($1::uuid[])`, [statusIds],
  )) as MessageRow[]);
  const statusById = new Map(statusMessages.map((m) => [m.id, toRecord(m)]));

  const history = new Map<string, MessageRecord[]>();
  if (options.historyLength > 0) {
    // Per task, the latest n from the (task_id, seq) index: older messages are never read.
    const messages = (await em.query(
      `SELECT h.* FROM unnest($1::uuid[]) AS ids(task_id)
         CROSS JOIN LATERAL (
           SELECT ${MESSAGE_COLUMNS} FROM messages m WHERE m.task_id = ids.task_id ORDER BY m.seq DESC LIMIT $2
         ) h
        ORDER BY h.task_id, h.seq`,
      [ids, options.historyLength],
    )) as MessageRow[];
    for (const m of messages) push(history, m.task_id, toRecord(m));
  }

  const artifacts = new Map<string, ArtifactRecord[]>();
  if (options.artifacts) {
    const rowsOfArtifacts = (await em.query(
      `SELECT a.task_id, a.artifact_id, a.name, a.description, a.parts, a.metadata
         FROM (SELECT id, sum(content_bytes) OVER (PARTITION BY task_id ORDER BY seq, artifact_id) AS running
                 FROM artifacts WHERE task_id = ANY($1::uuid[])) sized
         JOIN artifacts a ON a.id = sized.id
        WHERE $2::float8 IS NULL OR sized.running <= $2::float8
        ORDER BY a.task_id, a.seq`,
      [ids, options.maxArtifactBytes ?? null],
    )) as Array<{ task_id: string; artifact_id: string; name: string; description: string; parts: StoredPart[]; metadata: Record<string, unknown> | null }>;
    for (const a of rowsOfArtifacts) {
      push(artifacts, a.task_id, { artifactId: a.artifact_id, name: a.name, description: a.description, parts: a.parts, metadata: a.metadata });
    }
  }

  return rows.map((row) => ({
    id: row.id,
    contextId: row.context_id,
    ...participantsOf(row),
    state: row.state,
    statusMessage: row.status_message_id ? statusById.get(row.status_message_id) ?? null : null,
    statusTimestamp: row.status_timestamp,
    metadata: row.metadata,
    seq: row.seq,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    history: history.get(row.id) ?? [],
    artifacts: options.artifacts ? artifacts.get(row.id) ?? [] : null,
  }));
}

/**
 * The task's events after `afterSeq`, in order (at most `limit`: events carry their
 * messages, which may be large, so a stream catching up reads in modest batches).
 */
export async function readEvents(em: EntityManager, task: { id: string; contextId: string }, afterSeq: number, limit = 100): Promise<TaskEventRecord[]> {
  const rows = (await em.query(
    `SELECT e.seq AS event_seq, e.kind, e.state, e.artifact, e.created_at AS event_created_at, ${MESSAGE_COLUMNS}
       FROM task_events e LEFT JOIN messages m ON m.id = e.message_id
      WHERE e.task_id = $1 AND e.seq > $2
      ORDER BY e.seq LIMIT ${limit}`,
    [task.id, afterSeq],
  )) as Array<MessageRow & { event_seq: number; kind: TaskEventKind; state: TaskState; artifact: ArtifactChunk | null; event_created_at: Date }>;
  return rows.map((row) => ({
    seq: row.event_seq,
    kind: row.kind,
    state: row.state,
    message: row.id ? messageRecord(row, task.contextId) : null,
    artifact: row.artifact,
    createdAt: row.event_created_at,
  }));
}

export async function readMessages(em: EntityManager, where: string, params: unknown[], tail: string): Promise<Array<MessageRecord>> {
  const rows = (await em.query(
    `SELECT ${MESSAGE_COLUMNS}, t.context_id FROM messages m JOIN tasks t ON t.id = m.task_id WHERE ${where} ${tail}`,
    params,
  )) as Array<MessageRow & { context_id: string }>;
  return rows.map((row) => messageRecord(row, row.context_id));
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

function push<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
