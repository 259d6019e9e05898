import type { Statement, StatementClient, StatementResult } from './statement';
import { WriteBatch } from './write-batch';

type Hook = () => Promise<void> | void;

/** A statement waiting in a transaction to be sent, and who gets its answer. */
export interface Queued {
  statement: Statement;
  answered: (result: StatementResult) => Promise<void> | void;
  failed: (error: unknown) => void;
}

/**
 * A transaction (Database.transaction): its connection, its hooks, and what waits for
 * its next statement. Repositories take it as an optional last argument and pass it
 * on; only src/database/ looks inside.
 *
 * BEGIN is not sent on its own: it goes with the transaction's first statement;
 * statements asked for in the same turn of the event loop go together; writes handed
 * over with Database.send go with the statement after them, or with COMMIT — each
 * group in one round trip (pipeline.ts). A transaction that runs no statement sends
 * nothing at all.
 */
export class Tx {
  /** Whether BEGIN has been sent. */
  begun = false;
  /** COMMIT is on its way: nothing more may join the transaction (after-commit hooks still may). */
  closing = false;
  /** Committed or rolled back: no statement may run in it any more. */
  ended = false;
  /** Writes handed over (Database.send), to go with the next statement asked for. */
  readonly waiting: Queued[] = [];
  /** Statements asked for in this turn of the event loop, in order: they go together. */
  readonly asked: Queued[] = [];
  /** Reads that go with COMMIT (see AtCommit). */
  readonly finals: Queued[] = [];
  /** The last group sent: the next one goes after it (a driver without pipelines needs it, pipeline.ts). */
  tail: Promise<void> = Promise.resolve();
  readonly before: Hook[] = [];
  readonly after: Hook[] = [];
  /** Resolved once the transaction is settled (whenSettled); made only when asked for. */
  private settling?: { settled: Promise<void>; resolve: () => void };
  private isSettled = false;

  constructor(readonly client: StatementClient) {}

  /**
   * Resolves once the transaction is settled: committed and its after-commit hooks run,
   * or failed (then at once, before its ROLLBACK is answered: nothing of it is handed on).
   */
  whenSettled(): Promise<void> {
    if (this.isSettled) {
      return Promise.resolve();
    }
    if (!this.settling) {
      let resolve!: () => void;
      const settled = new Promise<void>((done) => (resolve = done));
      this.settling = { settled, resolve };
    }
    return this.settling.settled;
  }

  /** Settles the transaction (Database.transaction); again is nothing. */
  settle(): void {
    this.isSettled = true;
    this.settling?.resolve();
  }

  /**
   * Whether a statement or a before-commit hook may still join it — or, for
   * `'after-commit hook'`, a hook that runs once it has committed (those may still be
   * added while COMMIT is on its way). Never an AtCommit: it only reads.
   */
  accepts(what: 'statement' | 'after-commit hook' = 'statement'): boolean {
    return !(this instanceof AtCommit) && !this.ended && (what === 'after-commit hook' || !this.closing);
  }
}

/**
 * `tx` for a read that goes with its COMMIT, in the same round trip: what a unit of work
 * answers with once its writes are in (it sees them; nothing of the transaction runs
 * after it). Its rows arrive once the transaction has committed; if it rolls back, the
 * read fails with it. Pass it where a repository read takes a Tx, and do not wait for
 * the read inside the unit of work — it cannot come back before the commit.
 */
export class AtCommit extends Tx {
  constructor(readonly of: Tx) {
    super(of.client);
  }
}

function open(tx: Tx, what: 'statement' | 'after-commit hook'): Tx {
  if (tx instanceof AtCommit) {
    throw new Error('a commit hook needs the transaction itself, not AtCommit');
  }
  if (!tx.accepts(what)) {
    throw new Error('a commit hook needs the transaction that makes the change');
  }
  return tx;
}

/**
 * Runs `hook` inside `tx` just before it commits, in registration order; a hook may
 * register more. A hook that throws rolls the transaction back. The ledger flushes its
 * task journals here.
 */
export function beforeCommit(tx: Tx, hook: Hook): void {
  open(tx, 'statement').before.push(hook);
}

/**
 * Runs `hook` once `unit` — a transaction or a write batch — has committed (never
 * when it rolls back): wake-ups of dispatchers and streams. A failing hook is logged
 * by the caller's own means; it cannot undo the commit.
 */
export function afterCommit(unit: Tx | WriteBatch, hook: Hook): void {
  if (unit instanceof WriteBatch) {
    unit.afterCommit(hook);
  } else {
    open(unit, 'after-commit hook').after.push(hook);
  }
}

/**
 * Resolves once `tx` is settled — committed and its after-commit hooks run, or failed —
 * for whoever waits on what its after-commit hooks hand on (TaskWatch.expect).
 */
export function whenSettled(tx: Tx): Promise<void> {
  if (tx instanceof AtCommit) {
    throw new Error('whenSettled needs the transaction itself, not AtCommit');
  }
  return tx.whenSettled();
}

/** Whether `unit` is a transaction still open (or a write batch): where a change may be written. */
export function isOpen(unit: Tx | WriteBatch): boolean {
  return unit instanceof WriteBatch || unit.accepts();
}
