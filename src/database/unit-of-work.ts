import type {
  DataSource,
  EntitySubscriberInterface,
  QueryRunner,
  TransactionCommitEvent,
  TransactionRollbackEvent,
} from 'typeorm';
import type { Tx } from './database';
import { WriteBatch } from './write-batch';

type Hook = () => Promise<void> | void;

interface Work {
  before: Hook[];
  after: Hook[];
}

/** The hooks registered with each open transaction, by its connection. */
const pending = new WeakMap<QueryRunner, Work>();

function workOf(tx: Tx): Work {
  const runner = tx.queryRunner;
  if (!runner?.isTransactionActive) throw new Error('a commit hook needs the transaction that makes the change');
  let work = pending.get(runner);
  if (!work) pending.set(runner, (work = { before: [], after: [] }));
  return work;
}

/**
 * Runs `hook` inside `tx` just before it commits (the outermost transaction, not a
 * savepoint), in registration order; a hook may register more. A hook that throws
 * rolls the transaction back. The ledger flushes its task journals here.
 */
export function beforeCommit(tx: Tx, hook: Hook): void {
  workOf(tx).before.push(hook);
}

/**
 * Runs `hook` once `unit` — a transaction or a write batch — has committed (never
 * when it rolls back): wake-ups of dispatchers and streams. A failing hook is logged
 * by the caller's own means; it cannot undo the commit.
 */
export function afterCommit(unit: Tx | WriteBatch, hook: Hook): void {
  if (unit instanceof WriteBatch) unit.afterCommit(hook);
  else workOf(unit).after.push(hook);
}

/** The subscriber that runs the hooks; installed once per DataSource by `Database`. */
class UnitOfWork implements EntitySubscriberInterface {
  async beforeTransactionCommit(event: TransactionCommitEvent): Promise<void> {
    const runner = event.queryRunner;
    const work = pending.get(runner);
    if (!work || (runner as QueryRunner & { transactionDepth?: number }).transactionDepth !== 1) return;
    for (let hook = work.before.shift(); hook; hook = work.before.shift()) await hook();
  }

  async afterTransactionCommit(event: TransactionCommitEvent): Promise<void> {
    const runner = event.queryRunner;
    const work = pending.get(runner);
    if (!work || runner.isTransactionActive) return;
    pending.delete(runner);
    for (const hook of work.after) await hook();
  }

  afterTransactionRollback(event: TransactionRollbackEvent): void {
    if (!event.queryRunner.isTransactionActive) pending.delete(event.queryRunner);
  }
}

const installed = new WeakSet<DataSource>();

export function installUnitOfWork(dataSource: DataSource): void {
  if (installed.has(dataSource)) return;
  installed.add(dataSource);
  dataSource.subscribers.push(new UnitOfWork());
}
