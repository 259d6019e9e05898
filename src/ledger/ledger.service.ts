import { Inject, Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { badRequest, conflict, notFound } from '../common/app-error';
import { creationPosition, decodeCursor, keysetAfter, pageOf } from '../common/pagination';
import { isUuid } from '../common/parse-id.pipe';
import { LedgerEvents } from './ledger-events';
import { TaskJournal, type NewMessage } from './task-journal';
import { TaskNotifier, type TaskChange } from './task-notifier';
import { hydrateTasks, readEvents, TASK_COLUMNS, type HydrateOptions, type Participant, type TaskEventRecord, type TaskRecord, type TaskRow } from './task-records';
import type { ArtifactChunk } from './entities/task-event.entity';
import { transition, type ReplyState, type TaskState } from './task-state';
import { TaskWatch } from './task-watch';

/** The two identities a protocol call is about: the caller and the handle's identity. */
export interface TaskPair {
  requester: Participant;
  worker: Participant;
}

export interface SendInput {
  message: NewMessage;
  /** Continue this task (it must be the pair's). */
  taskId?: string;
  /** Start the new task in this context (it must be the pair's). */
  contextId?: string;
  /** Request metadata, kept on a new task. */
  metadata: Record<string, unknown> | null;
  /** Runs inside the send's transaction once the task is known (push notification config in the send). */
  alsoWithTask?: (em: EntityManager, task: TaskRow) => Promise<void>;
}

export interface SendResult {
  task: TaskRecord;
  /** The messageId was seen before: nothing was stored, the task is returned as it is. */
  duplicate: boolean;
}

export interface PairTaskFilter {
  contextId?: string;
  state?: TaskState;
  statusAfter?: Date;
  pageSize: number;
  pageToken?: string;
}

/** What a forwarded task's upstream agent answered, written as a worker's reply would be. */
export interface UpstreamUpdate {
  /** The upstream's own ids for the task, recorded the first time they are known. */
  upstream?: { taskId: string; contextId: string };
  state?: ReplyState;
  /** An agent message (a repeated messageId is not stored twice). */
  message?: NewMessage;
  artifacts?: ArtifactChunk[];
}

/** A forwarded task as the forwarder needs it. */
export interface ForwardedTask {
  id: string;
  state: TaskState;
  workerIdentityId: string;
  upstreamTaskId: string | null;
  upstreamContextId: string | null;
}

/** Raised inside a transaction to undo it when a retried creating send finds its first task. */
class DuplicateOrigin extends Error {}

/**
 * The ledger as the protocol sees it: every read and write is scoped to one
 * (requester, worker) pair, so a task of any other pair is simply not found. Errors
 * are AppErrors with stable codes; the protocol maps them to A2A errors.
 */
@Injectable()
export class LedgerService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly dataSource: DataSource,
    private readonly notifier: TaskNotifier,
    private readonly ledgerEvents: LedgerEvents,
  ) {}

  /** A message from the requester: a new task, or the next turn of one of the pair's tasks. */
  async send(pair: TaskPair, input: SendInput, read: HydrateOptions): Promise<SendResult> {
    if (input.taskId !== undefined) return this.continueTask(pair, input.taskId, input, read);
    try {
      return { task: await this.write((em, save) => this.createTask(em, save, pair, input, read)), duplicate: false };
    } catch (error) {
      if (!(error instanceof DuplicateOrigin)) throw error;
      const [row] = (await this.dataSource.query(
        `SELECT id FROM tasks WHERE requester_identity_id = $1 AND worker_identity_id = $2 AND origin_message_id = $3`,
        [pair.requester.id, pair.worker.id, input.message.messageId],
      )) as Array<{ id: string }>;
      return { task: (await this.find(pair, row.id, read))!, duplicate: true };
    }
  }

  /** One of the pair's tasks, or null. */
  async find(pair: TaskPair, taskId: string, read: HydrateOptions): Promise<TaskRecord | null> {
    if (!isUuid(taskId)) return null;
    const rows = (await this.dataSource.query(
      `SELECT ${TASK_COLUMNS} FROM tasks t WHERE t.id = $1 AND t.requester_identity_id = $2 AND t.worker_identity_id = $3`,
      [taskId, pair.requester.id, pair.worker.id],
    )) as TaskRow[];
    const [task] = await hydrateTasks(this.dataSource.manager, rows, this.bounded(read));
    return task ?? null;
  }

  /** The pair's tasks, newest first, with the total count of the filtered list. */
  async list(pair: TaskPair, filter: PairTaskFilter, read: HydrateOptions): Promise<{ tasks: TaskRecord[]; nextPageToken: string; totalSize: number }> {
    const params: unknown[] = [pair.requester.id, pair.worker.id];
    const where = ['t.requester_identity_id = $1', 't.worker_identity_id = $2'];
    if (filter.contextId !== undefined) {
      if (!isUuid(filter.contextId)) return { tasks: [], nextPageToken: '', totalSize: 0 };
      where.push(`t.context_id = $${params.push(filter.contextId)}`);
    }
    if (filter.state) where.push(`t.state = $${params.push(filter.state)}`);
    if (filter.statusAfter) where.push(`t.status_timestamp >= $${params.push(filter.statusAfter)}`);
    const cursor = decodeCursor(filter.pageToken || undefined);
    const [{ total }] = (await this.dataSource.query(
      `SELECT count(*)::int AS total FROM tasks t WHERE ${where.join(' AND ')}`, params,
    )) as Array<{ total: number }>;
    where.push(...keysetAfter('t', cursor, params));
    const rows = (await this.dataSource.query(
      `SELECT ${TASK_COLUMNS} FROM tasks t WHERE ${where.join(' AND ')} ORDER BY t.created_at DESC, t.id DESC LIMIT ${filter.pageSize + 1}`,
      params,
    )) as TaskRow[];
    const page = pageOf(rows, filter.pageSize, creationPosition);
    return {
      tasks: await hydrateTasks(this.dataSource.manager, page.items, this.bounded(read)),
      nextPageToken: page.nextCursor ?? '',
      totalSize: total,
    };
  }

  /**
   * The requester cancels: a non-terminal task becomes canceled; a canceled one is
   * returned as it is (A2A v1.0: cancel is idempotent), or refused like any other final
   * task when `repeat` is `refuse` (A2A v0.3: a final task is not cancelable). `also`
   * runs in the cancel's transaction when it changed the task (the upstream forwarder
   * queues the cancel there).
   */
  async cancel(
    pair: TaskPair, taskId: string, read: HydrateOptions, repeat: 'return' | 'refuse' = 'return',
    also?: (em: EntityManager, taskId: string) => Promise<void>,
  ): Promise<TaskRecord> {
    await this.write(async (em, save) => {
      const journal = await this.lockPairTask(em, pair, taskId);
      const next = transition(journal.state, { by: 'requester', action: 'cancel' });
      if (!next.ok || (!next.changed && repeat === 'refuse')) {
        throw conflict('task_not_cancelable', `The task is ${journal.state} and can no longer be canceled.`);
      }
      if (!next.changed) return;
      await journal.status('canceled');
      await also?.(em, journal.task.id);
      await save(journal);
    });
    return (await this.find(pair, taskId, read))!;
  }

  /** A read returns at most LEDGER_MAX_ARTIFACT_BYTES_PER_TASK of artifact content per task. */
  private bounded(read: HydrateOptions): HydrateOptions {
    return { ...read, maxArtifactBytes: this.config.ledgerMaxArtifactBytesPerTask };
  }

  /** The task's events after `afterSeq`, in order (at most `limit`). */
  events(task: { id: string; contextId: string }, afterSeq: number, limit?: number): Promise<TaskEventRecord[]> {
    return readEvents(this.dataSource.manager, task, afterSeq, limit);
  }

  /** A forwarded task's state and upstream ids, for the forwarder (never on behalf of a caller). */
  async forwardedTask(taskId: string): Promise<ForwardedTask | null> {
    const [row] = (await this.dataSource.query(
      `SELECT id, state, worker_identity_id, upstream_task_id, upstream_context_id FROM tasks WHERE id = $1`, [taskId],
    )) as Array<{ id: string; state: TaskState; worker_identity_id: string; upstream_task_id: string | null; upstream_context_id: string | null }>;
    return row
      ? { id: row.id, state: row.state, workerIdentityId: row.worker_identity_id, upstreamTaskId: row.upstream_task_id, upstreamContextId: row.upstream_context_id }
      : null;
  }

  /** The requester's message with this id on the task, as stored (the forwarder sends it on). */
  async requesterMessage(taskId: string, messageId: string): Promise<NewMessage | null> {
    const [row] = (await this.dataSource.query(
      `SELECT message_id, parts, metadata, extensions, reference_task_ids FROM messages WHERE task_id = $1 AND message_id = $2 AND role = 'user'`,
      [taskId, messageId],
    )) as Array<{ message_id: string; parts: NewMessage['parts']; metadata: Record<string, unknown> | null; extensions: string[]; reference_task_ids: string[] }>;
    return row
      ? { messageId: row.message_id, parts: row.parts, metadata: row.metadata, extensions: row.extensions, referenceTaskIds: row.reference_task_ids }
      : null;
  }

  /**
   * What an upstream agent answered — one or several updates that arrived together —
   * written through the journal exactly as the worker's REST reply is (state machine,
   * numbered events, outbox, wake-ups), in one transaction. `terminal` when the task
   * takes no more (canceled meanwhile, say): the updates after that point are dropped.
   * `refused` lists the states the state machine did not allow (those updates are skipped).
   */
  async applyUpstream(taskId: string, updates: readonly UpstreamUpdate[]): Promise<{ terminal: boolean; refused: ReplyState[] }> {
    return this.write(async (em, save) => {
      const journal = await TaskJournal.lock(em, 't.id = $1', [taskId]);
      const refused: ReplyState[] = [];
      if (!journal) return { terminal: true, refused };
      let changed = false;
      let terminal = false;
      let upstreamRecorded = false;
      for (const update of updates) {
        if (update.upstream && !upstreamRecorded) {
          await em.query(`UPDATE tasks SET upstream_task_id = $2, upstream_context_id = $3 WHERE id = $1 AND upstream_task_id IS NULL`,
            [taskId, update.upstream.taskId, update.upstream.contextId]);
          upstreamRecorded = true;
        }
        const message = update.message && !(await journal.hasMessage('agent', update.message.messageId)) ? update.message : undefined;
        const state = update.state === journal.state && !message ? undefined : update.state;
        const artifacts = update.artifacts ?? [];
        if (!state && !message && artifacts.length === 0) continue;
        const next = transition(journal.state, { by: 'worker', action: 'reply', to: state ?? null });
        if (!next.ok && next.reason === 'terminal') {
          terminal = true;
          break;
        }
        if (!next.ok) {
          refused.push(state!);
          continue;
        }
        if (message) await journal.requireRoomForMessage(this.config.ledgerMaxMessagesPerTask);
        for (const chunk of artifacts) await journal.artifact(chunk, this.config.ledgerMaxArtifactBytesPerTask);
        if (message) await journal.message('agent', message, 'status', next.state);
        else if (state) await journal.status(next.state);
        changed = true;
      }
      if (changed) await save(journal);
      return { terminal, refused };
    });
  }

  /** A task by its id alone, for the service's own use (push notifications), never on behalf of a caller. */
  async taskById(taskId: string, read: HydrateOptions): Promise<TaskRecord | null> {
    const rows = (await this.dataSource.query(`SELECT ${TASK_COLUMNS} FROM tasks t WHERE t.id = $1`, [taskId])) as TaskRow[];
    const [task] = await hydrateTasks(this.dataSource.manager, rows, this.bounded(read));
    return task ?? null;
  }

  /** Waits for changes to a task; see TaskWatch. Close it when done. */
  watch(taskId: string): TaskWatch {
    return new TaskWatch(this.notifier, taskId);
  }

  /** Locks one of the pair's tasks in a transaction, for this module's other writers. */
  async lockPairTask(em: EntityManager, pair: TaskPair, taskId: string): Promise<TaskJournal> {
    const journal = isUuid(taskId)
      ? await TaskJournal.lock(em, 't.id = $1 AND t.requester_identity_id = $2 AND t.worker_identity_id = $3', [taskId, pair.requester.id, pair.worker.id])
      : null;
    if (!journal) throw notFound('task_not_found', 'No such task between this requester and this worker.');
    return journal;
  }

  /**
   * Runs changes to tasks in one transaction. `save` writes a journal, announces its
   * change and records its events (webhooks, push notifications) in the same
   * transaction; the task's listeners wake once the transaction has committed.
   */
  async write<T>(work: (em: EntityManager, save: (journal: TaskJournal) => Promise<void>) => Promise<T>): Promise<T> {
    const changes: TaskChange[] = [];
    const result = await this.dataSource.transaction((em) =>
      work(em, async (journal) => {
        changes.push(await journal.save((tx, change) => this.notifier.announce(tx, change)));
        await this.ledgerEvents.emit(em, journal);
      }));
    for (const change of changes) this.notifier.committed(change);
    return result;
  }

  private async continueTask(pair: TaskPair, taskId: string, input: SendInput, read: HydrateOptions): Promise<SendResult> {
    const duplicate = await this.write(async (em, save) => {
      const journal = await this.lockPairTask(em, pair, taskId);
      if (input.contextId !== undefined && input.contextId !== journal.task.context_id) {
        throw badRequest('context_mismatch', 'The message\'s contextId is not the context of its task.');
      }
      if (await journal.hasMessage('user', input.message.messageId)) return true;
      const next = transition(journal.state, { by: 'requester', action: 'message' });
      if (!next.ok) throw conflict('task_terminal', `The task is ${journal.state}; it takes no more messages.`);
      await journal.requireRoomForMessage(this.config.ledgerMaxMessagesPerTask);
      await journal.message('user', input.message, next.changed ? 'status' : 'message', next.state);
      await input.alsoWithTask?.(em, journal.task);
      await save(journal);
      return false;
    });
    return { task: (await this.find(pair, taskId, read))!, duplicate };
  }

  /** Creates the task; its record is known without reading it back (no history but the message, no artifacts). */
  private async createTask(
    em: EntityManager, save: (journal: TaskJournal) => Promise<void>, pair: TaskPair, input: SendInput, read: HydrateOptions,
  ): Promise<TaskRecord> {
    const { requester: r, worker: w } = pair;
    const params: unknown[] = [r.id, r.handle, r.organizationId, w.id, w.handle, w.organizationId, input.message.messageId,
      input.metadata ? JSON.stringify(input.metadata) : null];
    // A new context is inserted by the same statement as the task (a retried send rolls both back).
    const context = input.contextId === undefined
      ? `INSERT INTO contexts (requester_identity_id, requester_handle, requester_organization_id, worker_identity_id, worker_handle, worker_organization_id)
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`
      : `SELECT $${params.push(await this.pairContext(em, pair, input.contextId))}::uuid AS id`;
    const [row] = (await em.query(
      `WITH c AS (${context})
       INSERT INTO tasks AS t (context_id, requester_identity_id, requester_handle, requester_organization_id,
                               worker_identity_id, worker_handle, worker_organization_id, origin_message_id, metadata)
       SELECT c.id, $1, $2, $3, $4, $5, $6, $7, $8::jsonb FROM c
       ON CONFLICT (requester_identity_id, worker_identity_id, origin_message_id) DO NOTHING
       RETURNING ${TASK_COLUMNS}`,
      params,
    )) as TaskRow[];
    if (!row) throw new DuplicateOrigin();
    const journal = TaskJournal.created(em, row);
    const message = await journal.message('user', input.message, 'status', 'submitted');
    await input.alsoWithTask?.(em, journal.task);
    await save(journal);
    const [task] = await hydrateTasks(em, [journal.task], { historyLength: 0, artifacts: false });
    return { ...task, history: read.historyLength === 0 ? [] : [message], artifacts: read.artifacts ? [] : null };
  }

  private async pairContext(em: EntityManager, pair: TaskPair, contextId: string): Promise<string> {
    // TypeORM answers an UPDATE with [rows, affected].
    const [rows] = isUuid(contextId)
      ? ((await em.query(
        `UPDATE contexts SET updated_at = now() WHERE id = $1 AND requester_identity_id = $2 AND worker_identity_id = $3 RETURNING id`,
        [contextId, pair.requester.id, pair.worker.id],
      )) as [Array<{ id: string }>, number])
      : [[]];
    if (rows.length === 0) throw badRequest('context_not_found', 'No such context between this requester and this worker.');
    return rows[0].id;
  }
}
