import type { TaskNotifier } from '../events/task-notifier';
import type { TaskEventRecord } from './task-records';

/** At most this many events wait in a watch to be taken (`hand`); a longer run is read from the ledger. */
const MAX_HANDED = 100;

/**
 * Waits for changes to one task. Subscribe first, then read the ledger, then wait:
 * a change committed between the read and the wait is not lost, because the
 * wake-up is remembered until the next `changed()`. Wake-ups coalesce. Changes the
 * caller knows already (`known`) do not wake it.
 *
 * The events this instance commits to the task are also handed to its watches
 * (`hand`, LedgerService), so a watcher woken by them takes them from memory instead
 * of reading them back (`takeCommitted`) — only when they are every event since the
 * watcher's last and up to the latest change it has heard of: whatever else was
 * committed meanwhile (on another instance) is read from the ledger, as before.
 */
export class TaskWatch {
  /** The latest change announced since the last `changed()` (none: -Infinity). */
  private pending = Number.NEGATIVE_INFINITY;
  private knownSeq = Number.NEGATIVE_INFINITY;
  private announced = Number.NEGATIVE_INFINITY;
  /** The latest change heard of, announced or not (+Infinity: some change, unknown which). */
  private heard = Number.NEGATIVE_INFINITY;
  /** Events this instance committed since they were last taken: consecutive, oldest first. */
  private handed: TaskEventRecord[] = [];
  /** This instance's commits to the task under way (expect): the change each makes, and when it settles. */
  private coming: Array<{ seq: number; settled: Promise<void> }> = [];
  /** End the `takeCommitted`s waiting for them (close). */
  private readonly stopWaiting = new Set<() => void>();
  private waiter: ((changed: boolean) => void) | null = null;
  private readonly unsubscribe: () => void;

  constructor(
    notifier: TaskNotifier,
    readonly taskId: string,
    private readonly closed: () => void = () => undefined,
  ) {
    this.unsubscribe = notifier.subscribe(taskId, (seq, announced) => this.poke(seq, announced));
  }

  /**
   * The latest change the database's channel announced (none: -Infinity): every
   * standing change committed before it has been counted (TaskListener).
   */
  get announcedThrough(): number {
    return this.announced;
  }

  /**
   * Resolves true when the task may have changed since the last call, false when
   * `timeoutMs` passed or `signal` aborted first.
   */
  changed(signal: AbortSignal, timeoutMs = Number.POSITIVE_INFINITY): Promise<boolean> {
    if (this.pending > this.knownSeq) {
      this.pending = Number.NEGATIVE_INFINITY;
      return Promise.resolve(true);
    }
    if (signal.aborted || timeoutMs <= 0) {
      return Promise.resolve(false);
    }
    return new Promise<boolean>((resolve) => {
      const finish = (changed: boolean) => {
        this.waiter = null;
        if (timer) {
          clearTimeout(timer);
        }
        signal.removeEventListener('abort', onAbort);
        resolve(changed);
      };
      const onAbort = () => finish(false);
      const timer = Number.isFinite(timeoutMs) ? setTimeout(() => finish(false), timeoutMs) : null;
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiter = finish;
    });
  }

  close(): void {
    this.unsubscribe();
    this.closed();
    this.handed = [];
    this.coming = [];
    for (const stop of this.stopWaiting) {
      stop();
    }
    this.waiter?.(false);
  }

  /**
   * This instance is committing change `seq` to the task (LedgerService, as the change
   * is flushed, COMMIT to follow): its events are handed once `settled` resolves — or
   * never, should it fail. The change's notification can come back before the commit's
   * own answer; a watch woken by it then waits for this (`takeCommitted`) rather than
   * read back from the ledger what is about to be handed.
   */
  expect(seq: number, settled: Promise<void>): void {
    const commit = { seq, settled };
    this.coming.push(commit);
    void settled.then(() => {
      this.coming = this.coming.filter((other) => other !== commit);
    });
  }

  /**
   * `take`, once this instance's commits of the changes heard of so far (expect) have
   * settled — the last statements of a transaction that is flushing, and its COMMIT;
   * not those of later changes. At once should `signal` abort or the watch close.
   */
  async takeCommitted(seq: number, signal: AbortSignal): Promise<TaskEventRecord[] | null> {
    const due = this.coming.filter((commit) => commit.seq <= this.heard);
    if (due.length > 0 && !signal.aborted) {
      await new Promise<void>((resolve) => {
        const done = () => {
          signal.removeEventListener('abort', done);
          this.stopWaiting.delete(done);
          resolve();
        };
        signal.addEventListener('abort', done, { once: true });
        this.stopWaiting.add(done);
        void Promise.all(due.map((commit) => commit.settled)).then(done);
      });
    }
    return this.take(seq);
  }

  /** Events this instance has just committed to the task, in order (LedgerService, after the commit). */
  hand(events: readonly TaskEventRecord[]): void {
    if (events.length === 0 || events[events.length - 1].seq <= this.knownSeq) {
      return;
    } // read already
    const last = this.handed.at(-1);
    if (last && events[0].seq !== last.seq + 1) {
      this.handed = [];
    }
    this.handed.push(...events);
    if (this.handed.length > MAX_HANDED) {
      this.handed = [];
    }
  }

  /**
   * The events after `seq`, from what was handed, when they are all of them up to the
   * latest change heard of; null when the ledger must be read instead (some were
   * committed elsewhere, or which changes there were is not known).
   */
  take(seq: number): TaskEventRecord[] | null {
    const start = this.handed.findIndex((event) => event.seq > seq);
    const events = start < 0 ? [] : this.handed.slice(start);
    this.handed = [];
    const last = events.at(-1);
    if (!last || events[0].seq !== seq + 1 || last.seq < this.heard) {
      return null;
    }
    return events;
  }

  /** The task as the caller holds it is at `seq`: a change up to it is no news. */
  known(seq: number): void {
    this.knownSeq = seq;
  }

  private poke(seq: number, announced: boolean): void {
    this.heard = Math.max(this.heard, seq);
    if (announced) {
      this.announced = Math.max(this.announced, seq);
    }
    if (seq <= this.knownSeq) {
      return;
    }
    if (this.waiter) {
      this.waiter(true);
    } else {
      this.pending = Math.max(this.pending, seq);
    }
  }
}
