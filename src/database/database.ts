import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { sql, type Sql } from './sql';
import { afterCommit, installUnitOfWork } from './unit-of-work';
import { batchStatement, WriteBatch, type BatchRows } from './write-batch';

/**
 * The transaction manager: the one name for "the transaction this work runs in".
 * Repositories take it as an optional last argument; without it a statement runs on
 * its own connection from the pool.
 */
export type Tx = EntityManager;

interface PoolLike {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
}

const names = new Map<string, string>();

/** A prepared statement's name for a text built at run time: the same text, the same name. */
function statementName(text: string): string {
  let name = names.get(text);
  if (!name) {
    name = `batch_${createHash('sha1').update(text).digest('hex').slice(0, 16)}`;
    if (names.size < 1000) names.set(text, name);
  }
  return name;
}

/**
 * How repositories run statements (built with the `sql` tag). The only place that
 * decodes the driver's results, so no caller handles TypeORM's `[rows, affected]`.
 */
@Injectable()
export class Database {
  constructor(readonly dataSource: DataSource) {
    installUnitOfWork(dataSource);
  }

  /** The rows a statement returns. */
  async rows<R>(query: Sql, tx?: Tx): Promise<R[]> {
    return (await this.run(query, tx)).records as R[];
  }

  /** The first row, or null. */
  async one<R>(query: Sql, tx?: Tx): Promise<R | null> {
    return ((await this.run(query, tx)).records[0] as R | undefined) ?? null;
  }

  /** The number of rows an INSERT, UPDATE or DELETE touched. */
  async execute(query: Sql, tx?: Tx): Promise<number> {
    return (await this.run(query, tx)).affected ?? 0;
  }

  /**
   * A hot-path statement as a named prepared statement, straight on the driver's
   * pool: PostgreSQL parses and plans it once per connection, and TypeORM's
   * per-query QueryRunner is skipped (about 45% more authenticated requests per
   * second, BENCHMARKS.md). It takes a connection of its own, so it never runs
   * inside a transaction.
   */
  async prepared<R>(name: string, query: Sql): Promise<R[]> {
    const pool = (this.dataSource.driver as unknown as { master: PoolLike }).master;
    return (await pool.query({ name, text: query.text, values: [...query.values] })).rows as R[];
  }

  /**
   * Independent writes (none reads another's effect; see WriteBatch) as one statement:
   * run now, in `unit`'s transaction or on their own; or, when `unit` is a batch,
   * queued to join its one statement. With `committed`, every statement has a
   * RETURNING clause and `committed` gets their rows (one list per statement) once
   * they have committed — never after a rollback — to wake whoever handles them.
   */
  async write(
    statements: readonly Sql[],
    unit?: Tx | WriteBatch,
    committed?: (rows: BatchRows[]) => void,
  ): Promise<void> {
    if (unit instanceof WriteBatch) {
      const rows: BatchRows[] = statements.map(() => []);
      statements.forEach((statement, i) => unit.write(statement, committed && ((returned) => (rows[i] = returned))));
      if (committed) unit.afterCommit(() => committed(rows));
      return;
    }
    const members = statements.map((statement) => ({ statement, returned: committed }));
    const result = await this.rows<{ member: number; row: Record<string, unknown> }>(
      statements.length === 1 && !committed ? statements[0] : batchStatement(members),
      unit,
    );
    if (!committed) return;
    const rows: BatchRows[] = statements.map(() => []);
    for (const { member, row } of result) rows[member].push(row);
    if (unit) afterCommit(unit, () => committed(rows));
    else committed(rows);
  }

  /**
   * A unit of work that reads nothing: `work` queues its writes in a WriteBatch, which
   * is sent as one statement — its own transaction, one round trip, no BEGIN/COMMIT —
   * prepared under a name of its text (a few shapes, each planned once per
   * connection). Then each member gets its rows and the after-commit hooks run.
   * `work` may be async, but nothing it awaits reads the database: a write queued in
   * the batch resolves at once.
   */
  async batch<T>(work: (batch: WriteBatch) => T | Promise<T>): Promise<T> {
    const batch = new WriteBatch();
    const result = await work(batch);
    if (batch.isEmpty) throw new Error('a batch without writes');
    const statement = batch.statement();
    const rows = await this.prepared<{ member: number; row: Record<string, unknown> }>(
      statementName(statement.text),
      statement,
    );
    await batch.settle(rows);
    return result;
  }

  /** Whether the database answers (readiness); throws when it does not. */
  async ping(): Promise<void> {
    await this.run(sql`SELECT 1`);
  }

  /** Runs `work` in a transaction; commit hooks (unit-of-work.ts) run at its end. */
  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(work);
  }

  protected async run(query: Sql, tx?: Tx): Promise<{ records: unknown[]; affected?: number }> {
    const runner = tx?.queryRunner ?? this.dataSource.createQueryRunner();
    try {
      const result = await runner.query(query.text, [...query.values], true);
      return { records: Array.isArray(result.records) ? result.records : [], affected: result.affected };
    } finally {
      if (!tx?.queryRunner) await runner.release();
    }
  }
}
