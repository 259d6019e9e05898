import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { DataSource, QueryFailedError, type EntityManager } from 'typeorm';
import { sql, type Sql } from './sql';
import { afterCommit, installUnitOfWork } from './unit-of-work';
import { batchStatement, WriteBatch, type BatchRows } from './write-batch';

/**
 * The transaction manager: the one name for "the transaction this work runs in".
 * Repositories take it as an optional last argument; without it a statement runs on
 * its own connection from the pool.
 */
export type Tx = EntityManager;

interface Driven {
  rows?: unknown[];
  rowCount?: number | null;
}

/** node-postgres's Pool and Client (and the embedded pool's) as far as statements go. */
interface Connection {
  query(config: { name?: string; text: string; values: unknown[] }): Promise<Driven>;
}

/** Prepared statement names by text, at most this many (beyond, a text runs unnamed). */
const MAX_NAMED_TEXTS = 2000;
const names = new Map<string, string>();

/**
 * A prepared statement's name for a statement text: the same text, the same name, so
 * PostgreSQL parses it once per connection and, after a few runs, plans it once.
 * Texts are the `sql` templates of the repositories (a bounded set); should something
 * build unbounded texts, those past MAX_NAMED_TEXTS run unnamed instead of filling
 * every connection with statements.
 */
function statementName(text: string): string | undefined {
  let name = names.get(text);
  if (!name && names.size < MAX_NAMED_TEXTS) {
    name = `s_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
    names.set(text, name);
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
   * A statement under a name of our choosing (so it reads well in PostgreSQL's logs and
   * pg_stat_statements); otherwise the same as `rows` outside a transaction.
   */
  async prepared<R>(name: string, query: Sql): Promise<R[]> {
    return (await this.dispatch(this.pool, query, name)).records as R[];
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
    const rows = await this.rows<{ member: number; row: Record<string, unknown> }>(statement);
    await batch.settle(rows);
    return result;
  }

  /**
   * A batch filled inside a transaction, sent as one statement of it (nothing when it
   * is empty): each member gets its rows at once; its after-commit hooks wait for the
   * transaction's commit. The task journal sends its writes this way.
   */
  async send(batch: WriteBatch, tx: Tx): Promise<void> {
    if (batch.isEmpty) return;
    const rows = await this.rows<{ member: number; row: Record<string, unknown> }>(batch.statement(), tx);
    await batch.settle(rows, (hook) => afterCommit(tx, hook));
  }

  /** Whether the database answers (readiness); throws when it does not. */
  async ping(): Promise<void> {
    await this.run(sql`SELECT 1`);
  }

  /** Runs `work` in a transaction; commit hooks (unit-of-work.ts) run at its end. */
  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(work);
  }

  /**
   * Every statement goes straight to the driver — the pool, or the transaction's own
   * connection — as a prepared statement named by its text (statementName), skipping
   * TypeORM's per-query QueryRunner. A statement without parameters runs as a simple
   * query (it may hold several statements: the migrations' do). Failures are wrapped
   * as TypeORM's QueryFailedError, as before, so error handling sees one shape.
   */
  protected async run(query: Sql, tx?: Tx): Promise<{ records: unknown[]; affected?: number }> {
    const runner = tx?.queryRunner;
    if (runner?.isReleased) throw new Error('the transaction this statement was meant for has ended');
    const connection = runner ? ((await runner.connect()) as Connection) : this.pool;
    return this.dispatch(connection, query);
  }

  private get pool(): Connection {
    return (this.dataSource.driver as unknown as { master: Connection }).master;
  }

  private async dispatch(
    connection: Connection,
    query: Sql,
    name = query.values.length > 0 ? statementName(query.text) : undefined,
  ): Promise<{ records: unknown[]; affected?: number }> {
    // Times as ISO strings (every column is timestamptz): the driver's own conversion is slower.
    const values = query.values.map((value) =>
      value instanceof Date && !Number.isNaN(value.getTime()) ? value.toISOString() : value,
    );
    try {
      const result = await connection.query({ name, text: query.text, values });
      return { records: result.rows ?? [], affected: result.rowCount ?? undefined };
    } catch (error) {
      throw new QueryFailedError(query.text, values, error as Error);
    }
  }
}
