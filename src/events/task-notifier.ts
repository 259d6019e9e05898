import { OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import type { Logger } from 'pino';
import { KeyedSets } from '../common/keyed-sets';
import { PgListener } from '../database/pg-listener';

/** A task changed; its events up to `seq` are committed. */
export interface TaskChange {
  taskId: string;
  seq: number;
}

/**
 * Wake-ups for whoever waits on a task (blocking sends, SSE streams), across every
 * instance of the service on one database. A notification only says "task X has
 * changed"; listeners re-read the ledger (or take what their own instance committed
 * as the ledger hands it to them: TaskWatch.takeCommitted), so order and completeness never come
 * from the notification. Listeners may therefore be woken more often
 * than needed (after a reconnect, all of them are), never less.
 */
export abstract class TaskNotifier {
  private readonly listeners = new KeyedSets<string, TaskListener>();

  /**
   * Called once the transaction that made the change has committed. (Inside it, the
   * statement that saves the task also notifies the database's listeners:
   * LedgerRepository.saveTask; a task's creation notifies only here, as nobody else
   * can know its id yet: LedgerRepository.queueNewTask. On PostgreSQL this wakes
   * this instance's watches only while its listener is down: PgTaskNotifier.)
   */
  abstract committed(change: TaskChange): void;

  /** For /readyz: whether the cross-instance channel is up; null when there is none (embedded). */
  abstract healthy(): boolean | null;

  /**
   * When (`performance.now()`) this instance last counted a change to anyone's
   * standing — a key's status, an identity, a contact rule — or could have missed one;
   * +Infinity while it cannot count them. A read issued after that time saw every
   * such change announced so far; see CallStanding.
   */
  abstract standingChangedAt(): number;

  /**
   * Calls `listener` whenever the task may have changed, with the change's `seq` (its
   * events up to it are committed; Infinity when unknown, as after a reconnect) and
   * whether the database's channel announced it (see TaskListener); returns the
   * unsubscribe.
   */
  subscribe(taskId: string, listener: TaskListener): () => void {
    return this.listeners.add(taskId, listener);
  }

  /** How many listeners are waiting (on one task, or on all): shows that streams clean up after themselves. */
  listenerCount(taskId?: string): number {
    return this.listeners.count(taskId);
  }

  protected isWatched(taskId: string): boolean {
    return this.listeners.has(taskId);
  }

  protected wake(taskId: string, seq = Number.POSITIVE_INFINITY, announced = false): void {
    for (const listener of this.listeners.get(taskId)) {
      listener(seq, announced);
    }
  }

  protected wakeAll(): void {
    for (const taskId of this.listeners.keys()) {
      this.wake(taskId);
    }
  }
}

/** Embedded mode (one process, no DATABASE_URL): an in-process bus, woken after commit. */
export class LocalTaskNotifier extends TaskNotifier {
  committed(change: TaskChange): void {
    this.wake(change.taskId, change.seq);
  }

  healthy(): null {
    return null;
  }

  /** Nothing announces standing changes here: never counted, so always read. */
  standingChangedAt(): number {
    return Number.POSITIVE_INFINITY;
  }
}

/**
 * The one LISTEN/NOTIFY channel: `taskId:seq` for a task, `events:<organization>:0` for
 * the outbox, `standing:0` for a change to anyone's standing (sent by triggers: the
 * StandingChanges migration).
 */
export const CHANGES_CHANNEL = 'a2a_task_changes';
const CHANNEL = CHANGES_CHANNEL;

/** How long this instance's own commit waits for its notification before waking its watches itself (PgTaskNotifier.committed). */
const LATE_WAKE_MS = 100;

/** The key of a standing change's notification (`standing:0`). */
export const STANDING_KEY = 'standing';

/**
 * A task's listener: `seq` as TaskNotifier.subscribe says; `announced` when the
 * database's channel delivered it. PostgreSQL delivers a session's notifications in
 * the order their transactions committed, so an announced change comes after every
 * standing change committed before it has been counted (standingChangedAt); a wake-up
 * from this instance's own commit can come before them.
 */
export type TaskListener = (seq: number, announced: boolean) => void;

/**
 * The key that the outbox's commits wake (instead of a task id): the event stream of
 * an organization listens on it. The notification is sent by the statement that
 * writes the event (EventsService), so it reaches every instance after the commit.
 */
export const eventsKey = (organizationId: string) => `events:${organizationId}`;

/**
 * PostgreSQL LISTEN/NOTIFY. A change's transaction issues `pg_notify` (in the
 * statement that saves the task; not for a task's creation), which PostgreSQL
 * delivers only when that transaction commits, to every listening session — this
 * instance's and the others'. Each instance listens on one dedicated connection
 * (PgListener); when it drops and comes back, every listener is woken, since
 * notifications sent in between are lost.
 */
export class PgTaskNotifier extends TaskNotifier implements OnModuleInit, OnModuleDestroy {
  private readonly listener: PgListener;
  /** See standingChangedAt: +Infinity until the channel is first listened to. */
  private standingChanged = Number.POSITIVE_INFINITY;

  constructor(connectionString: string, logger: Logger) {
    super();
    this.listener = new PgListener(connectionString, CHANNEL, logger, {
      notification: (payload) => {
        const at = payload.lastIndexOf(':');
        const key = payload.slice(0, at);
        if (key === STANDING_KEY) {
          this.standingChanged = performance.now();
        } else {
          this.wake(key, Number(payload.slice(at + 1)) || Number.POSITIVE_INFINITY, true);
        }
      },
      // What is announced while the connection is down is lost, standing changes too:
      // every watch reads again (unannounced, so it asks), at the loss and once back.
      lost: () => this.wakeAll(),
      // Listening from now on: what was committed before was never announced here (or
      // was lost), but a read issued from now on sees it.
      listening: (again) => {
        this.standingChanged = performance.now();
        if (again) {
          this.wakeAll();
        }
      },
    });
  }

  async onModuleInit(): Promise<void> {
    await this.listener.start();
  }

  async onModuleDestroy(): Promise<void> {
    await this.listener.stop();
  }

  /**
   * PostgreSQL delivers the notification to every listener, this instance included,
   * and as a change announced on the channel a wake-up may skip its standing re-check
   * (CallStanding), where one from here may not: so while the listener is up, a task's
   * watches here wait for it too (it tends to arrive as the commit's own answer does,
   * often before: BENCHMARKS.md), and are woken from here only LATE_WAKE_MS later —
   * no news by then, unless the notification never came (a connection fallen silent
   * that the heartbeat has not found yet, a pooler that does not pass LISTEN on).
   * While it is down they are woken now. The outbox's listeners (seq 0) always wait
   * for the notification.
   */
  committed(change: TaskChange): void {
    if (change.seq <= 0 || !this.isWatched(change.taskId)) {
      return;
    }
    if (!this.listener.connected) {
      this.wake(change.taskId, change.seq);
    } else {
      setTimeout(() => this.wake(change.taskId, change.seq), LATE_WAKE_MS).unref();
    }
  }

  /** The LISTEN connection is up (between a loss and the reconnect it is not). */
  healthy(): boolean {
    return this.listener.connected;
  }

  standingChangedAt(): number {
    return this.listener.connected ? this.standingChanged : Number.POSITIVE_INFINITY;
  }
}
