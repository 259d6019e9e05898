import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { sql, type Sql } from './sql';
import { installUnitOfWork } from './unit-of-work';

/**
 * The transaction manager: the one name for "the transaction this work runs in".
 * Repositories take it as an optional last argument; without it a statement runs on
 * its own connection from the pool.
 */
export type Tx = EntityManager;

interface PoolLike {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
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
