import type { TaskNotifier } from '../events/task-notifier';

/**
 * Waits for changes to one task. Subscribe first, then read the ledger, then wait:
 * a change committed between the read and the wait is not lost, because the
 * wake-up is remembered until the next `changed()`. Wake-ups coalesce. Changes the
 * caller knows already (`known`) do not wake it.
 */
export class TaskWatch {
  /** The latest change announced since the last `changed()` (none: -Infinity). */
  private pending = Number.NEGATIVE_INFINITY;
  private knownSeq = Number.NEGATIVE_INFINITY;
  private announced = Number.NEGATIVE_INFINITY;
  private waiter: ((changed: boolean) => void) | null = null;
  private readonly unsubscribe: () => void;

  constructor(
    notifier: TaskNotifier,
    readonly taskId: string,
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
    if (signal.aborted || timeoutMs <= 0) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const finish = (changed: boolean) => {
        this.waiter = null;
        if (timer) clearTimeout(timer);
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
    this.waiter?.(false);
  }

  /** The task as the caller holds it is at `seq`: a change up to it is no news. */
  known(seq: number): void {
    this.knownSeq = seq;
  }

  private poke(seq: number, announced: boolean): void {
    if (announced) this.announced = Math.max(this.announced, seq);
    if (seq <= this.knownSeq) return;
    if (this.waiter) this.waiter(true);
    else this.pending = Math.max(this.pending, seq);
  }
}
