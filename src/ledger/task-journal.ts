import type { EntityManager } from 'typeorm';
import { conflict } from '../common/app-error';
import type { ArtifactChunk, TaskEventKind } from './entities/task-event.entity';
import type { MessageRole } from './entities/task-message.entity';
import type { StoredPart } from './parts';
import { TASK_COLUMNS, type MessageRecord, type TaskRow } from './task-records';
import type { TaskChange } from './task-notifier';
import { currentTraceId } from '../tracing/tracing';
import type { TaskState } from './task-state';

export interface NewMessage {
  messageId: string;
  parts: StoredPart[];
  metadata: Record<string, unknown> | null;
  extensions: string[];
  referenceTaskIds: string[];
}

/** One change recorded by a journal, as the events module reports it (CONTRACT §8). */
export type JournalEntry =
  | { kind: 'message'; seq: number; message: MessageRecord; state: TaskState; changesStatus: boolean }
  | { kind: 'status'; seq: number; state: TaskState }
  | { kind: 'artifact'; seq: number; artifact: ArtifactChunk };

/**
 * The changes made to one task inside one transaction, while its row is locked
 * (`SELECT … FOR UPDATE`): concurrent writers to the same task queue behind the lock,
 * so each sees the state the previous one left and events are numbered without gaps
 * or duplicates. Every change is an event; `save()` writes the task row and
 * announces the change (delivered to listeners only once the transaction commits).
 */
export class TaskJournal {
  private statusChanged = false;
  /** What this transaction changed, in order (the task's events). */
  readonly entries: JournalEntry[] = [];

  private constructor(
    private readonly em: EntityManager,
    readonly task: TaskRow,
    /** The task was inserted by this transaction. */
    readonly isNew = false,
  ) {}

  /** Locks the task matching `where` (over tasks `t`), or returns null. */
  static async lock(em: EntityManager, where: string, params: unknown[]): Promise<TaskJournal | null> {
    const [row] = (await em.query(`SELECT ${TASK_COLUMNS} FROM tasks t WHERE ${where} FOR UPDATE`, params)) as TaskRow[];
    return row ? new TaskJournal(em, row) : null;
  }

  /** The journal of a task this transaction has just inserted (so it holds its lock). */
  static created(em: EntityManager, row: TaskRow): TaskJournal {
    return new TaskJournal(em, row, true);
  }

  get state(): TaskState {
    return this.task.state;
  }

  /** Whether this task already holds a message with that A2A messageId from that role. */
  async hasMessage(role: MessageRole, messageId: string): Promise<boolean> {
    const rows = (await this.em.query(
      `SELECT 1 FROM messages WHERE task_id = $1 AND role = $2 AND message_id = $3`, [this.task.id, role, messageId],
    )) as unknown[];
    return rows.length > 0;
  }

  /**
   * Refuses one more message once the task holds `max` (LEDGER_MAX_MESSAGES_PER_TASK).
   * Counted under the task's row lock, so concurrent writers cannot both slip past the
   * limit; the count reads at most `max` entries of the (task_id, seq) index.
   */
  async requireRoomForMessage(max: number): Promise<void> {
    const [{ count }] = (await this.em.query(
      `SELECT count(*)::int AS count FROM (SELECT 1 FROM messages WHERE task_id = $1 LIMIT $2) m`, [this.task.id, max],
    )) as Array<{ count: number }>;
    if (count >= max) {
      throw conflict('task_message_limit', `The task holds its maximum of ${max} messages; continue in a new task (the same contextId keeps the thread).`);
    }
  }

  /**
   * Records a message. With `kind: 'status'` the event also carries the task's new
   * state (an agent message becomes the status message); with `'message'` the state
   * is unchanged and only the history grows.
   */
  async message(role: MessageRole, message: NewMessage, kind: 'status' | 'message', state: TaskState): Promise<MessageRecord> {
    this.task.seq += 1;
    // The message and its event in one statement.
    const [row] = (await this.em.query(
      `WITH m AS (
         INSERT INTO messages (task_id, message_id, role, parts, metadata, extensions, reference_task_ids, seq)
         VALUES ($1, $2, $3, $4::jsonb, $5::jsonb, $6::jsonb, $7::jsonb, $8) RETURNING id, created_at)
       INSERT INTO task_events (task_id, seq, kind, state, message_id, trace_id)
       SELECT $1, $8, $9, $10, m.id, $11 FROM m
       RETURNING message_id AS id, created_at`,
      [this.task.id, message.messageId, role, JSON.stringify(message.parts), json(message.metadata),
        JSON.stringify(message.extensions), JSON.stringify(message.referenceTaskIds), this.task.seq, kind, state, currentTraceId()],
    )) as Array<{ id: string; created_at: Date }>;
    if (kind === 'status') this.setStatus(state, role === 'agent' ? row.id : null);
    const record: MessageRecord = { rowId: row.id, taskId: this.task.id, contextId: this.task.context_id, role, seq: this.task.seq, createdAt: row.created_at, ...message };
    this.entries.push({ kind: 'message', seq: this.task.seq, message: record, state, changesStatus: kind === 'status' });
    return record;
  }

  /** A new state without a message. */
  async status(state: TaskState): Promise<void> {
    await this.event('status', state, null, null);
    this.setStatus(state, null);
    this.entries.push({ kind: 'status', seq: this.task.seq, state });
  }

  /**
   * One artifact chunk: creates, replaces (no `append`) or extends the artifact.
   * Refused when the task's artifacts would then hold more than `maxBytes` of
   * content (LEDGER_MAX_ARTIFACT_BYTES_PER_TASK), appends included: counted under the
   * task's row lock, so concurrent writers cannot both slip past the limit.
   */
  async artifact(chunk: ArtifactChunk, maxBytes: number): Promise<void> {
    const bytes = Buffer.byteLength(JSON.stringify(chunk.parts));
    const [held] = (await this.em.query(
      `SELECT COALESCE(sum(content_bytes), 0)::float8 AS total,
              COALESCE(sum(content_bytes) FILTER (WHERE artifact_id = $2), 0)::float8 AS own
         FROM artifacts WHERE task_id = $1`,
      [this.task.id, chunk.artifactId],
    )) as Array<{ total: number; own: number }>;
    if (held.total - (chunk.append ? 0 : held.own) + bytes > maxBytes) {
      throw conflict('task_artifact_limit', `The task's artifacts would exceed their maximum of ${maxBytes} bytes of content; put further output in a new task.`);
    }
    const [existing] = (await this.em.query(
      `SELECT name, description, last_chunk FROM artifacts WHERE task_id = $1 AND artifact_id = $2 FOR UPDATE`,
      [this.task.id, chunk.artifactId],
    )) as Array<{ name: string; description: string; last_chunk: boolean }>;
    if (chunk.append && !existing) {
      throw conflict('artifact_not_found', `Cannot append to artifact "${chunk.artifactId}": the task has no such artifact.`);
    }
    if (chunk.append && existing.last_chunk) {
      throw conflict('artifact_closed', `Artifact "${chunk.artifactId}" already received its last chunk.`);
    }
    const seq = this.task.seq + 1;
    if (chunk.append) {
      await this.em.query(
        `UPDATE artifacts SET parts = parts || $3::jsonb, last_chunk = $4, updated_at = now(),
                metadata = COALESCE($5::jsonb, metadata), content_bytes = content_bytes + $6
          WHERE task_id = $1 AND artifact_id = $2`,
        [this.task.id, chunk.artifactId, JSON.stringify(chunk.parts), chunk.lastChunk, json(chunk.metadata), bytes],
      );
    } else {
      await this.em.query(
        `INSERT INTO artifacts (task_id, artifact_id, name, description, parts, metadata, last_chunk, seq, content_bytes)
         VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7, $8, $9)
         ON CONFLICT (task_id, artifact_id) DO UPDATE
            SET name = EXCLUDED.name, description = EXCLUDED.description, parts = EXCLUDED.parts,
                metadata = EXCLUDED.metadata, last_chunk = EXCLUDED.last_chunk, updated_at = now(),
                content_bytes = EXCLUDED.content_bytes`,
        [this.task.id, chunk.artifactId, chunk.name, chunk.description, JSON.stringify(chunk.parts), json(chunk.metadata), chunk.lastChunk, seq, bytes],
      );
    }
    const recorded = { ...chunk, name: chunk.name || existing?.name || '', description: chunk.description || existing?.description || '' };
    await this.event('artifact', this.task.state, null, recorded);
    this.entries.push({ kind: 'artifact', seq: this.task.seq, artifact: recorded });
  }

  /** Writes the task row and announces the change; returns it for after the commit. */
  async save(announce: (em: EntityManager, change: TaskChange) => Promise<void>): Promise<TaskChange> {
    const [[saved]] = (await this.em.query(
      `UPDATE tasks SET state = $2, status_message_id = $3, seq = $4, updated_at = now(),
              status_timestamp = CASE WHEN $5 THEN now() ELSE status_timestamp END
        WHERE id = $1
       RETURNING updated_at, status_timestamp`,
      [this.task.id, this.task.state, this.task.status_message_id, this.task.seq, this.statusChanged],
    )) as [Array<{ updated_at: Date; status_timestamp: Date }>, number];
    Object.assign(this.task, saved);
    const change = { taskId: this.task.id, seq: this.task.seq };
    await announce(this.em, change);
    return change;
  }

  private async event(kind: TaskEventKind, state: TaskState, messageRowId: string | null, artifact: ArtifactChunk | null): Promise<void> {
    this.task.seq += 1;
    await this.em.query(
      `INSERT INTO task_events (task_id, seq, kind, state, message_id, artifact, trace_id) VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7)`,
      [this.task.id, this.task.seq, kind, state, messageRowId, json(artifact), currentTraceId()],
    );
  }

  private setStatus(state: TaskState, statusMessageId: string | null): void {
    this.task.state = state;
    this.task.status_message_id = statusMessageId;
    this.statusChanged = true;
  }
}

const json = (value: unknown): string | null => (value === null || value === undefined ? null : JSON.stringify(value));
