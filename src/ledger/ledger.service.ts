import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { badRequest, conflict, notFound } from '../common/app-error';
import { Keyset, recordCreationPosition } from '../common/pagination';
import { KeyedSets } from '../common/keyed-sets';
import { isUuid } from '../common/parse-id.pipe';
import { Database, type Tx } from '../database/database';
import { newRowId } from '../database/row-id';
import { brokenConstraint, failedWith } from '../database/errors';
import { afterCommit, beforeCommit, whenSettled } from '../database/unit-of-work';
import type { WriteBatch } from '../database/write-batch';
import { currentTraceId } from '../tracing/tracing';
import { LedgerEvents } from './ledger-events';
import { LedgerRepository, TASK_MOVED_ON } from './ledger.repository';
import { TaskReadsRepository, type PairTaskFilter as PairTaskRowFilter } from './task-reads.repository';
import { TaskJournal, type JournalEntry, type RoomAsked } from './task-journal';
import { TaskNotifier } from '../events/task-notifier';
import {
  agentText,
  type HydrateOptions,
  type MessageRecord,
  type NewMessage,
  type NewTaskTree,
  type TaskEventRecord,
  type TaskPair,
  type TaskHead,
  type TaskRecord,
} from './task-records';
import { isTerminal, transition } from './task-state';
import { TaskWatch } from './task-watch';
import { treeRefusal } from './task-tree.service';
import { UsageMeter } from '../usage/usage-meter';
import { RememberedTasks, type RememberedTask } from './remembered-tasks';

export interface SendInput {
  message: NewMessage;
  /** Continue this task (it must be the pair's). */
  taskId?: string;
  /** Start the new task in this context (it must be the pair's). */
  contextId?: string;
  /** Request metadata, kept on a new task. */
  metadata: Record<string, unknown> | null;
  /** The skill the message names (docs/api.md §16): a new task's; a later message names its task's. */
  skill: string | null;
}

/** A held task, locked for its approval's outcome (LedgerService.lockHeld). */
export interface HeldTask {
  /** Held and open: it waits for a decision (not canceled or refused meanwhile). */
  readonly waiting: boolean;
  /** Approved: the task goes to its worker. */
  release(): Promise<{ task: TaskHead; firstMessage: MessageRecord }>;
  /** Denied or expired: the task is rejected with `note` as its status message. */
  refuse(note: string): Promise<void>;
}

/** A new task and its first message, as a send created it. */
export interface Created {
  kind: 'created';
  task: TaskHead;
  message: MessageRecord;
}

/**
 * What a send recorded in its transaction: a new task, the next turn of one, or
 * nothing (a retried send: the messageId was seen before). The caller may write more
 * in the same transaction (the task's journal holds its row lock until the commit).
 */
export type Sent =
  | (Created & { journal: TaskJournal })
  | { kind: 'continued'; journal: TaskJournal }
  | { kind: 'duplicate'; taskId: string };

export interface SendResult {
  task: TaskRecord;
  /** The messageId was seen before: nothing was stored, the task is returned as it is. */
  duplicate: boolean;
}

export interface PairTaskFilter extends PairTaskRowFilter {
  pageSize: number;
  pageToken?: string;
}

/** How many tasks an instance remembers as it last committed them (RememberedTasks): 1–2 KB each at most. */
const REMEMBERED_TASKS = 10_000;

/**
 * The ledger as the protocol sees it: every read and write is scoped to one
 * (requester, worker) pair, so a task of any other pair is simply not found. Errors
 * are AppErrors with stable codes; the protocol maps them to A2A errors.
 */
@Injectable()
export class LedgerService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly db: Database,
    private readonly repository: LedgerRepository,
    private readonly reads: TaskReadsRepository,
    private readonly notifier: TaskNotifier,
    private readonly ledgerEvents: LedgerEvents,
    private readonly usage: UsageMeter,
  ) {}

  /**
   * A send that starts a task, written as one statement (Database.batch): the
   * context, the task, its first message and event, the outbox events and whatever
   * `also` queues with them (the forward to an upstream agent) commit together in one
   * round trip. The notifier is told at commit (TaskNotifier.committed); nobody can be
   * waiting on a task whose id they have not yet been told (LedgerRepository.queueNewTask).
   * Every id and time is chosen here (ids that follow time: newRowId), so the new
   * task's record is known without reading it back.
   * A retried send (the pair has a task for this messageId) writes nothing and
   * returns that task as it is.
   */
  async start(
    pair: TaskPair,
    input: Omit<SendInput, 'taskId'>,
    read: HydrateOptions,
    also?: (batch: WriteBatch, taskId: string) => Promise<void> | void,
  ): Promise<SendResult> {
    if (input.contextId !== undefined && !isUuid(input.contextId)) {
      throw contextNotFound();
    }
    const at = new Date();
    const now = at.getTime();
    const row: TaskHead = {
      id: newRowId(now),
      contextId: input.contextId?.toLowerCase() ?? newRowId(now), // as PostgreSQL keeps a uuid
      requester: pair.requester,
      worker: pair.worker,
      state: 'submitted',
      statusMessageId: null,
      statusTimestamp: at,
      metadata: input.metadata,
      skill: input.skill,
      held: false,
      seq: 1,
      createdAt: at,
      updatedAt: at,
    };
    const message: MessageRecord = {
      ...input.message,
      rowId: newRowId(now),
      taskId: row.id,
      contextId: row.contextId,
      role: 'user',
      seq: row.seq,
      createdAt: at,
    };
    const creation: JournalEntry = { kind: 'message', seq: row.seq, message, state: row.state, changesStatus: true };
    try {
      await this.db.batch(async (batch) => {
        const newContext = input.contextId === undefined;
        const tree = this.treeOf(input.message);
        await this.repository.queueNewTask(batch, row, message, message.messageId, newContext, currentTraceId(), tree);
        await this.ledgerEvents.emit(batch, row, [creation], creation);
        afterCommit(batch, () => {
          // As stored — but for metadata, whose keys jsonb orders its own way: then the first change reads it.
          if (row.metadata === null) {
            this.remembered.remember(row, 1);
          }
          this.notifier.committed({ taskId: row.id, seq: row.seq });
        });
        await also?.(batch, row.id);
      });
    } catch (error) {
      const constraint = brokenConstraint(error);
      if (constraint === 'fk_tasks_context') {
        throw contextNotFound();
      }
      if (constraint !== 'uq_tasks_origin') {
        throw treeRefusal(error) ?? error;
      }
      const taskId = await this.repository.originTask(pair, message.messageId);
      return { task: (await this.pairRecord(pair, taskId!, read))!, duplicate: true };
    }
    return this.sendResult(pair, { kind: 'created', task: row, message }, read);
  }

  /**
   * The send's writes, in the caller's ledger transaction (`write`): a new task, the
   * next turn of one of the pair's tasks, or — the messageId was seen before — nothing.
   */
  recordSend(tx: Tx, pair: TaskPair, input: SendInput): Promise<Sent> {
    return input.taskId !== undefined
      ? this.continueTask(tx, pair, input.taskId, input)
      : this.createTask(tx, pair, input);
  }

  /** The answer to a send once its transaction has committed; a new task's record is known without reading it back. */
  async sendResult(pair: TaskPair, sent: Sent | Created, read: HydrateOptions): Promise<SendResult> {
    switch (sent.kind) {
      case 'created': {
        // A held task has its status message too (docs/api.md §16): read back whole.
        if (sent.task.held) {
          return { task: (await this.pairRecord(pair, sent.task.id, read))!, duplicate: false };
        }
        // No history but the message, no artifacts, and no status message (a requester's message is not one).
        const [task] = await this.reads.hydrate([sent.task], { historyLength: 0, artifacts: false });
        return {
          task: {
            ...task,
            history: read.historyLength === 0 ? [] : [sent.message],
            artifacts: read.artifacts ? [] : null,
          },
          duplicate: false,
        };
      }
      case 'continued':
        return { task: (await this.pairRecord(pair, sent.journal.task.id, read))!, duplicate: false };
      case 'duplicate':
        return { task: (await this.pairRecord(pair, sent.taskId, read))!, duplicate: true };
    }
  }

  /** One of the pair's tasks, or null (an id that is no task id names none). */
  async find(pair: TaskPair, taskId: string, read: HydrateOptions): Promise<TaskRecord | null> {
    return isUuid(taskId) ? this.pairRecord(pair, taskId, read) : null;
  }

  /** One of the pair's tasks by an id this service has already checked (locked, or read back): not checked again. */
  private pairRecord(pair: TaskPair, taskId: string, read: HydrateOptions): Promise<TaskRecord | null> {
    return this.reads.pairTaskRecord(taskId, pair, this.bounded(read));
  }

  /** The pair's tasks, newest first, with the total count of the filtered list. */
  async list(
    pair: TaskPair,
    filter: PairTaskFilter,
    read: HydrateOptions,
  ): Promise<{ tasks: TaskRecord[]; nextPageToken: string; totalSize: number }> {
    if (filter.contextId !== undefined && !isUuid(filter.contextId)) {
      return { tasks: [], nextPageToken: '', totalSize: 0 };
    }
    const page = new Keyset('t', filter.pageToken || undefined, filter.pageSize);
    const total = await this.reads.countPairTasks(pair, filter);
    const { items, nextCursor } = page.cut(await this.reads.pairTasks(pair, filter, page), recordCreationPosition);
    return {
      tasks: await this.reads.hydrate(items, this.bounded(read)),
      nextPageToken: nextCursor ?? '',
      totalSize: total,
    };
  }

  /**
   * The requester cancels, in a ledger transaction: a non-terminal task becomes
   * canceled; a canceled one is left as it is (A2A v1.0: cancel is idempotent), or
   * refused like any other final task when `repeat` is `refuse` (A2A v0.3: a final
   * task is not cancelable). `also` runs in the same transaction when the cancel
   * changed the task, with its journal (the upstream forwarder queues the cancel
   * there). Returns the task as the cancel left it, read by the id its lock checked
   * (not checked again).
   */
  async cancel(
    pair: TaskPair,
    taskId: string,
    read: HydrateOptions,
    repeat: 'return' | 'refuse' = 'return',
    also?: (tx: Tx, canceled: TaskJournal) => Promise<void>,
  ): Promise<TaskRecord> {
    await this.write(async (tx) => {
      const journal = await this.lockPairTask(tx, pair, taskId);
      const next = transition(journal.state, { by: 'requester', action: 'cancel' });
      if (!next.ok || (!next.changed && repeat === 'refuse')) {
        throw conflict('task_not_cancelable', `The task is ${journal.state} and can no longer be canceled.`);
      }
      if (next.changed) {
        await journal.status('canceled');
        await also?.(tx, journal);
      }
    });
    return (await this.pairRecord(pair, taskId, read))!;
  }

  /**
   * A task this transaction created, held from its worker's side until it is approved
   * (docs/api.md §16): `auth-required` while it waits, or `rejected` when it cannot,
   * with `note` as the service's status message. `also` writes the caller's own change
   * (the approval request's event) with the journal's next statement.
   */
  async hold(
    created: Extract<Sent, { kind: 'created' }>,
    state: 'auth-required' | 'rejected',
    note: string,
    also?: (unit: WriteBatch) => Promise<void>,
  ): Promise<void> {
    const { journal } = created;
    journal.hold();
    await journal.message('agent', agentText(note), 'status', state);
    if (also) {
      await journal.alongside(also);
    }
  }

  /**
   * A held task locked in the caller's transaction, for the outcome of its approval
   * (docs/api.md §16): decisions on a task's requests, and its cancel, take its lock
   * first, so they see each other's effects. Null when there is no such task.
   */
  async lockHeld(tx: Tx, taskId: string): Promise<HeldTask | null> {
    const journal = await this.lockTask(tx, taskId);
    if (!journal) {
      return null;
    }
    return {
      waiting: journal.task.held && !isTerminal(journal.state),
      // Approved: `submitted`, and from now on the worker's side sees it — `task.created`
      // with its first message, then the status change (LedgerEvents).
      release: async () => {
        const firstMessage = (await this.reads.firstMessages([taskId], tx)).get(taskId)!;
        journal.release(firstMessage);
        await journal.status('submitted');
        return { task: journal.task, firstMessage };
      },
      // Denied, or its approval expired.
      refuse: async (note) => {
        await journal.message('agent', agentText(note), 'status', 'rejected');
      },
    };
  }

  /** Each task's first message (the requester's, which created it), by task id. */
  firstMessages(taskIds: readonly string[], tx?: Tx): Promise<Map<string, MessageRecord>> {
    return this.reads.firstMessages(taskIds, tx);
  }

  /** Where a new task may join a tree (docs/api.md §18): the task ids its message references (at most 16, ids only). */
  private treeOf(message: NewMessage): NewTaskTree {
    const refs = message.referenceTaskIds.filter((id) => isUuid(id)).slice(0, 16);
    return { refs: refs.map((id) => id.toLowerCase()), maxDepth: this.config.ledgerMaxTreeDepth };
  }

  /** A read returns at most LEDGER_MAX_ARTIFACT_BYTES_PER_TASK of artifact content per task. */
  private bounded(read: HydrateOptions): HydrateOptions {
    return { ...read, maxArtifactBytes: this.config.ledgerMaxArtifactBytesPerTask };
  }

  /** The task's events after `afterSeq`, in order (at most `limit`). */
  events(task: { id: string; contextId: string }, afterSeq: number, limit?: number): Promise<TaskEventRecord[]> {
    return this.reads.events(task, afterSeq, limit);
  }

  /** A task by its id alone, for the service's own use (push notifications, approvals), never on behalf of a caller. */
  async taskById(taskId: string, read: HydrateOptions, tx?: Tx): Promise<TaskRecord | null> {
    return this.reads.taskRecord(taskId, this.bounded(read), tx);
  }

  /** Waits for changes to a task; see TaskWatch. Close it when done. */
  watch(taskId: string): TaskWatch {
    const watch = new TaskWatch(this.notifier, taskId, () => forget());
    const forget = this.watches.add(taskId, watch);
    return watch;
  }

  /** This instance's open watches, by task: handed the events this instance commits (TaskWatch.hand). */
  private readonly watches = new KeyedSets<string, TaskWatch>();

  /** The tasks this instance committed last, as it left them (RememberedTasks). */
  private readonly remembered = new RememberedTasks(REMEMBERED_TASKS);

  /**
   * Runs `work` on one task in a ledger transaction; `lock()` gives it the task's
   * journal — the task locked, `room` read with the lock, as lockTask does — or null
   * when there is no such task (the caller decides who may change it). When this
   * instance remembers the task as it last committed it and `mayUseRemembered` accepts
   * that (say, a reply the task as remembered allows), the transaction does not read it
   * first: its lock goes ahead of the writes, in their round trip, and holds only if the
   * task is still at the event remembered (LedgerRepository.lockTaskAt). Should it have
   * moved on, that transaction fails there, before COMMIT and any of its writes; what
   * was remembered is forgotten, and `work` runs again with lockTask. `room` from memory
   * needs the message count remembered, and messages of new ids (just chosen: the task
   * cannot hold them yet).
   */
  async writeTask<T>(
    taskId: string,
    room: RoomAsked | undefined,
    mayUseRemembered: (task: RememberedTask) => boolean,
    work: (tx: Tx, lock: () => Promise<TaskJournal | null>) => Promise<T>,
  ): Promise<T> {
    const task = this.remembered.recall(taskId);
    if (task && (!room || task.messages !== null) && mayUseRemembered(task)) {
      try {
        return await this.write((tx) => work(tx, async () => this.lockRemembered(tx, task, room)));
      } catch (error) {
        if (!failedWith(error, TASK_MOVED_ON)) {
          throw error;
        }
        this.remembered.forget(taskId);
      }
    }
    return this.write((tx) => work(tx, () => this.lockTask(tx, taskId, room)));
  }

  /** The journal of a task as remembered, its lock checking that it still is (writeTask). */
  private lockRemembered(tx: Tx, task: RememberedTask, room: RoomAsked | undefined): TaskJournal {
    this.repository.lockTaskAt(task.row.id, task.row.seq, tx);
    const journal = this.open(tx, task.row, false);
    // The count remembered goes on to what this transaction leaves, asked about or not.
    const asked = room ?? { role: 'agent', messageIds: [], max: this.config.ledgerMaxMessagesPerTask };
    if (task.messages !== null) {
      journal.knowRoom(asked, { held: [], count: task.messages });
    }
    return journal;
  }

  /**
   * Locks one of the pair's tasks in a ledger transaction, for this module's other
   * writers. With `room`, the journal's messageRoom for those messages is read with
   * the lock, in the same round trip (it runs once the lock is held).
   */
  async lockPairTask(tx: Tx, pair: TaskPair, taskId: string, room?: RoomAsked): Promise<TaskJournal> {
    const found = isUuid(taskId)
      ? await this.lockWithRoom(tx, taskId, this.repository.lockTask(taskId, pair, tx), room)
      : null;
    if (!found) {
      throw notFound('task_not_found', 'No such task between this requester and this worker.');
    }
    return found;
  }

  /** Locks a task by its id alone in a ledger transaction (the caller decides who may change it); `room` as lockPairTask. */
  async lockTask(tx: Tx, taskId: string, room?: RoomAsked): Promise<TaskJournal | null> {
    return this.lockWithRoom(tx, taskId, this.repository.lockTask(taskId, null, tx), room);
  }

  /**
   * The journal of the task `lock` (a statement just asked for) locks, with `room` read
   * in the same round trip: asked together, sent together, the room's read runs once
   * the lock is held. Null, and nothing known, when the lock found no task. For this
   * module's writers that ask for more in that round trip (ForwardedTasksService).
   */
  async lockWithRoom(
    tx: Tx,
    taskId: string,
    lock: Promise<TaskHead | null>,
    room: RoomAsked | undefined,
  ): Promise<TaskJournal | null> {
    const [row, found] = await Promise.all([
      lock,
      room && this.repository.messageRoom(taskId, room.role, room.messageIds, room.max, tx),
    ]);
    if (!row) {
      return null;
    }
    const journal = this.open(tx, row, false);
    if (room && found) {
      journal.knowRoom(room, found);
    }
    return journal;
  }

  /**
   * Runs changes to tasks in one transaction: a unit of work. Every journal opened in
   * it (lockTask, lockPairTask, a send) is flushed just before it commits — the task
   * row, its change announced to listeners, its events (webhooks, push notifications)
   * — and the notifier is told once it has committed (TaskNotifier.committed). Nothing to save by hand.
   */
  write<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  /** A journal registered with its transaction: flushed before the commit, the notifier told after. */
  private open(tx: Tx, row: TaskHead, isNew: boolean): TaskJournal {
    const journal = new TaskJournal(
      tx,
      this.db,
      this.repository,
      row,
      isNew,
      async (flushed, entries, unit) => {
        await this.ledgerEvents.emit(
          unit,
          flushed.task,
          entries,
          flushed.isNew ? flushed.entries[0] : null,
          flushed.released,
        );
        const change = { taskId: flushed.task.id, seq: flushed.task.seq };
        const row = { ...flushed.task };
        const messages = flushed.messageCount;
        // The watches open now, and so subscribed before the commit (a later one may not hear of what follows it).
        const watches = this.watches.get(change.taskId);
        let events: TaskEventRecord[] = [];
        if (watches.length > 0) {
          events = flushed.eventRecords(entries);
          const settled = whenSettled(tx);
          for (const watch of watches) {
            watch.expect(change.seq, settled);
          }
        }
        afterCommit(tx, () => {
          this.remembered.remember(row, messages);
          for (const watch of watches) {
            if (this.watches.has(change.taskId, watch)) {
              watch.hand(events);
            }
          }
          this.notifier.committed(change);
        });
      },
      (unit) => this.usage.finish(unit, row.id),
    );
    beforeCommit(tx, () => journal.flush());
    return journal;
  }

  private async continueTask(tx: Tx, pair: TaskPair, taskId: string, input: SendInput): Promise<Sent> {
    const max = this.config.ledgerMaxMessagesPerTask;
    const journal = await this.lockPairTask(tx, pair, taskId, {
      role: 'user',
      messageIds: [input.message.messageId],
      max,
    });
    if (input.contextId !== undefined && input.contextId.toLowerCase() !== journal.task.contextId) {
      throw badRequest('context_mismatch', "The message's contextId is not the context of its task.");
    }
    if (input.skill !== journal.task.skill) {
      throw badRequest('skill_mismatch', `This task's messages name its skill: ${journal.task.skill ?? 'none'}.`);
    }
    const room = await journal.messageRoom('user', input.message.messageId, max);
    if (room.held) {
      return { kind: 'duplicate', taskId: journal.task.id };
    }
    if (journal.task.held && !isTerminal(journal.state)) {
      throw conflict(
        'task_awaiting_approval',
        'The task waits for approval; it takes no messages until it is approved (or start a new task).',
      );
    }
    const next = transition(journal.state, { by: 'requester', action: 'message' });
    if (!next.ok) {
      throw conflict('task_terminal', `The task is ${journal.state}; it takes no more messages.`);
    }
    room.requireRoom();
    await journal.message('user', input.message, next.changed ? 'status' : 'message', next.state);
    return { kind: 'continued', journal };
  }

  /**
   * Creates the task, and a new context unless one of the pair's is named, in one
   * statement. A retried send (the pair has a task for this messageId) inserts no
   * task: the result says so, and a context inserted for it goes again.
   */
  private async createTask(tx: Tx, pair: TaskPair, input: SendInput): Promise<Sent> {
    if (input.contextId !== undefined && !isUuid(input.contextId)) {
      throw contextNotFound();
    }
    const created = await this.repository
      .createTask(
        pair,
        input.message.messageId,
        input.metadata,
        input.skill,
        input.contextId ?? null,
        this.treeOf(input.message),
        tx,
      )
      .catch((error: unknown) => {
        throw treeRefusal(error) ?? error;
      });
    switch (created.kind) {
      case 'no_context':
        throw contextNotFound();
      case 'duplicate': {
        if (created.newContextId) {
          await this.repository.deleteEmptyContext(created.newContextId, tx);
        }
        return { kind: 'duplicate', taskId: (await this.repository.originTask(pair, input.message.messageId, tx))! };
      }
      case 'created': {
        const journal = this.open(tx, created.task, true);
        const message = await journal.message('user', input.message, 'status', 'submitted');
        return { kind: 'created', task: journal.task, message, journal };
      }
    }
  }
}

const contextNotFound = () =>
  badRequest('context_not_found', 'No such context between this requester and this worker.');
