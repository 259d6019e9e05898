import { conflict } from '../common/app-error';
import type { Database, Tx } from '../database/database';
import { WriteBatch } from '../database/write-batch';
import { newRowId } from '../database/row-id';
import type { ArtifactChunk } from './entities/task-event.entity';
import type { MessageRole } from './entities/task-message.entity';
import type { LedgerRepository } from './ledger.repository';
import type { MessageRecord, NewMessage, TaskEventRecord, TaskHead } from './task-records';
import { currentTraceId } from '../tracing/tracing';
import { isTerminal, type TaskState } from './task-state';

/** One change recorded by a journal, as the events module reports it (docs/api.md §8). */
export type JournalEntry =
  | { kind: 'message'; seq: number; message: MessageRecord; state: TaskState; changesStatus: boolean }
  | { kind: 'status'; seq: number; state: TaskState }
  | { kind: 'artifact'; seq: number; artifact: ArtifactChunk; state: TaskState };

/** The messages a caller will ask messageRoom about: read with the task's lock (LedgerService.lockTask). */
export interface RoomAsked {
  role: MessageRole;
  messageIds: readonly string[];
  max: number;
}

/**
 * What happens to a journal's new entries when it is flushed (LedgerService: events,
 * wake-ups), written into `unit`, the flush's one statement.
 */
export type JournalFlush = (journal: TaskJournal, entries: readonly JournalEntry[], unit: WriteBatch) => Promise<void>;

/**
 * The changes made to one task inside one transaction, while its row is locked
 * (`SELECT … FOR UPDATE`): concurrent writers to the same task queue behind the lock,
 * so each sees the state the previous one left and events are numbered without gaps
 * or duplicates. Every change is an event. Writes wait in a batch and go to the
 * database together, as one statement of the transaction, in the same round trip as
 * the statement after them (Database.send): the journal's next read (which must see
 * them), or — after `flush()`, which adds the task row, the events of the events
 * module and the listeners' notification, and which the transaction runs before it
 * commits (LedgerService registers it: the ledger write is a unit of work, there is no
 * save to forget) — COMMIT. Ids and times are chosen here, as the transaction's own
 * time is for PostgreSQL: one per journal.
 */
export class TaskJournal {
  private statusChanged = false;
  /** What this transaction changed, in order (the task's events). */
  readonly entries: JournalEntry[] = [];
  /** How many entries have been flushed. */
  private flushed = 0;
  /** Writes not yet sent. */
  private pending = new WriteBatch();
  /** The time of this journal's changes. */
  private readonly at = new Date();
  /**
   * When this transaction releases a held task to its worker (docs/api.md §16): the
   * task's first message, for the worker's `task.created`; handed on at the next flush.
   */
  released: MessageRecord | null = null;
  /** What messageRoom read, kept up to date as this journal writes messages. */
  private room: { role: MessageRole; max: number; asked: Set<string>; held: Set<string>; count: number } | null = null;

  /** The state the task was in when this journal opened it. */
  private readonly openedAs: TaskState;
  /** This transaction ended the task, and its measurement is queued (onEnd). */
  private ended = false;

  constructor(
    private readonly tx: Tx,
    private readonly db: Database,
    private readonly repository: LedgerRepository,
    readonly task: TaskHead,
    /** The task was inserted by this transaction. */
    readonly isNew: boolean,
    private readonly onFlush: JournalFlush,
    /** When this transaction ends the task: a statement of its own after the flush's, which sees them (usage, docs/api.md §18). */
    private readonly onEnd?: (unit: WriteBatch) => Promise<void>,
  ) {
    this.openedAs = task.state;
  }

  get state(): TaskState {
    return this.task.state;
  }

  /**
   * How many messages the task holds, when this journal knows it exactly: read by
   * messageRoom (below its `max`), or — for a task this transaction created — the
   * messages written since; null otherwise.
   */
  get messageCount(): number | null {
    if (this.room) {
      return this.room.count < this.room.max ? this.room.count : null;
    }
    return this.isNew ? this.entries.filter((entry) => entry.kind === 'message').length : null;
  }

  /**
   * Whether the task holds a message with that A2A messageId from that role already,
   * and a `requireRoom` that refuses one more message once the task holds `max`
   * (LEDGER_MAX_MESSAGES_PER_TASK; call it once the message is known to be written) —
   * one read, under the task's row lock, so concurrent writers cannot both slip past
   * the limit; the count reads at most `max` entries of the (task_id, seq) index.
   * `expected` names the messages the caller will ask about next in this transaction:
   * they are read now, together, and answered from what this journal knows afterwards
   * (the messages it writes included), without reading again — as are those read with
   * the lock (knowRoom).
   */
  async messageRoom(
    role: MessageRole,
    messageId: string,
    max: number,
    expected: readonly string[] = [],
  ): Promise<{ held: boolean; requireRoom: () => void }> {
    const known = this.room?.role === role && this.room.max === max && this.room.asked.has(messageId);
    if (!known) {
      this.send();
      const asked = { role, max, messageIds: [messageId, ...expected.filter((id) => id !== messageId)] };
      this.knowRoom(asked, await this.repository.messageRoom(this.task.id, role, asked.messageIds, max, this.tx));
    }
    const { held, count } = this.room!;
    return {
      held: held.has(messageId),
      requireRoom: () => {
        if (count >= max) {
          throw messageLimit(max);
        }
      },
    };
  }

  /**
   * What a messageRoom read alongside the task's lock found (LedgerService.lockTask):
   * messageRoom answers for those messages from it, without reading again.
   */
  knowRoom(asked: RoomAsked, found: { held: readonly string[]; count: number }): void {
    this.room = {
      role: asked.role,
      max: asked.max,
      asked: new Set(asked.messageIds),
      held: new Set(found.held),
      count: found.count,
    };
  }

  /**
   * Records a message. With `kind: 'status'` the event also carries the task's new
   * state (an agent message becomes the status message); with `'message'` the state
   * is unchanged and only the history grows.
   */
  async message(
    role: MessageRole,
    message: NewMessage,
    kind: 'status' | 'message',
    state: TaskState,
  ): Promise<MessageRecord> {
    this.task.seq += 1;
    const record: MessageRecord = {
      rowId: newRowId(this.at.getTime()),
      taskId: this.task.id,
      contextId: this.task.contextId,
      role,
      seq: this.task.seq,
      createdAt: this.at,
      ...message,
    };
    await this.repository.writeMessage(record, kind, state, currentTraceId(), this.pending);
    if (this.room) {
      this.room.count += 1;
      if (this.room.role === role) {
        this.room.held.add(message.messageId);
      }
    }
    if (kind === 'status') {
      this.setStatus(state, role === 'agent' ? record.rowId : null);
    }
    this.entries.push({
      kind: 'message',
      seq: this.task.seq,
      message: record,
      state,
      changesStatus: kind === 'status',
    });
    return record;
  }

  /** Holds the task from its worker's side until it is approved (docs/api.md §16); written with the next flush. */
  hold(): void {
    this.task.held = true;
  }

  /** The task is approved: its worker's side sees it from now on, starting with `firstMessage` (its `task.created`). */
  release(firstMessage: MessageRecord): void {
    this.task.held = false;
    this.released = firstMessage;
  }

  /** A new state without a message. */
  async status(state: TaskState): Promise<void> {
    this.task.seq += 1;
    await this.repository.writeStatus(this.task.id, this.task.seq, state, this.at, currentTraceId(), this.pending);
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
    this.send();
    const { total, own, existing } = await this.repository.lockArtifact(this.task.id, chunk.artifactId, this.tx);
    if (total - (chunk.append ? 0 : own) + bytes > maxBytes) {
      throw conflict(
        'task_artifact_limit',
        `The task's artifacts would exceed their maximum of ${maxBytes} bytes of content; put further output in a new task.`,
      );
    }
    if (chunk.append && !existing) {
      throw conflict(
        'artifact_not_found',
        `Cannot append to artifact "${chunk.artifactId}": the task has no such artifact.`,
      );
    }
    if (chunk.append && existing!.last_chunk) {
      throw conflict('artifact_closed', `Artifact "${chunk.artifactId}" already received its last chunk.`);
    }
    const recorded = {
      ...chunk,
      name: chunk.name || existing?.name || '',
      description: chunk.description || existing?.description || '',
    };
    this.task.seq += 1;
    await this.repository.writeArtifact(
      this.task.id,
      chunk,
      recorded,
      this.task.seq,
      bytes,
      this.task.state,
      this.at,
      currentTraceId(),
      this.pending,
    );
    this.entries.push({ kind: 'artifact', seq: this.task.seq, artifact: recorded, state: this.task.state });
  }

  /**
   * Writes the task row and hands the entries recorded since the last flush on (their
   * events, the wake-ups after the commit), in one statement with the writes still
   * waiting, which goes with the transaction's next statement. Runs by itself just
   * before the transaction commits; call it earlier only to read the task back inside
   * the transaction. When nothing changed since, it hands over only the writes waiting
   * (another module's, `alongside`).
   */
  async flush(): Promise<void> {
    if (this.flushed === this.entries.length) {
      return this.send();
    }
    const entries = this.entries.slice(this.flushed);
    this.flushed = this.entries.length;
    this.task.updatedAt = this.at;
    if (this.statusChanged) {
      this.task.statusTimestamp = this.at;
    }
    await this.repository.saveTask(this.task, this.pending);
    await this.onFlush(this, entries, this.pending);
    this.released = null;
    this.send();
    if (this.onEnd && !this.ended && isTerminal(this.task.state) && !isTerminal(this.openedAs)) {
      this.ended = true;
      await this.onEnd(this.pending);
      this.send();
    }
  }

  /** `entries` as the task's events, as they are written (and as TaskReadsRepository.events reads them back). */
  eventRecords(entries: readonly JournalEntry[]): TaskEventRecord[] {
    return entries.map((entry) => {
      const createdAt = this.at;
      switch (entry.kind) {
        case 'message': {
          const kind = entry.changesStatus ? 'status' : 'message';
          return { seq: entry.seq, kind, state: entry.state, message: entry.message, artifact: null, createdAt };
        }
        case 'status':
          return { seq: entry.seq, kind: 'status', state: entry.state, message: null, artifact: null, createdAt };
        case 'artifact':
          return {
            seq: entry.seq,
            kind: 'artifact',
            state: entry.state,
            message: null,
            artifact: entry.artifact,
            createdAt,
          };
      }
    });
  }

  /** Another module's write in this transaction, sent with the journal's next statement. */
  async alongside(write: (unit: WriteBatch) => Promise<void>): Promise<void> {
    await write(this.pending);
  }

  /** Hands the waiting writes to the transaction, as one statement of it that goes with its next one. */
  private send(): void {
    if (this.pending.isEmpty) {
      return;
    }
    const batch = this.pending;
    this.pending = new WriteBatch();
    this.db.send(batch, this.tx);
  }

  private setStatus(state: TaskState, statusMessageId: string | null): void {
    this.task.state = state;
    this.task.statusMessageId = statusMessageId;
    this.statusChanged = true;
  }
}

const messageLimit = (max: number) =>
  conflict(
    'task_message_limit',
    `The task holds its maximum of ${max} messages; continue in a new task (the same contextId keeps the thread).`,
  );
