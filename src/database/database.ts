import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { DataSource, QueryFailedError } from 'typeorm';
import { sql, type Sql } from './sql';
import {
  PipelineError,
  runInTurn,
  type GroupRunner,
  type Statement,
  type StatementClient,
  type StatementResult,
} from './statement';
import { afterCommit, AtCommit, Tx, type Queued } from './unit-of-work';
import { batchStatement, sqlOf, WriteBatch, type BatchRows, type ShapedWrite, type TaggedRow } from './write-batch';

/**
 * `Tx`, the transaction: the one name for "the transaction this work runs in".
 * Repositories take it as an optional last argument; without it a statement runs on
 * its own connection from the pool. `AtCommit(tx)`: the same transaction, for a read
 * that goes with its COMMIT.
 */
export { AtCommit, Tx };

/** node-postgres's Pool (and the embedded pool): statements, or a connection of one's own until released. */
interface Pool extends StatementClient {
  connect(
    callback: (error: Error | undefined, client: StatementClient, release: (error?: unknown) => void) => void,
  ): void;
}

const BEGIN: Statement = { text: 'BEGIN', values: [] };
const COMMIT: Statement = { text: 'COMMIT', values: [] };

/** Group commit (Database.batch): statements of one kind on their way at once, and batches one statement takes at most. */
const BATCHES_SENDING = 1;
const BATCHES_TOGETHER = 16;

interface PendingBatch {
  batch: WriteBatch;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * Prepared statement names by text, at most this many (beyond, a text runs unnamed): each
 * connection may hold as many prepared statements, some of them large (a group commit of
 * 16 sends), so the bound is kept modest; the hot texts are the first ones seen.
 */
const MAX_NAMED_TEXTS = 500;
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

/** How a Database sends a transaction's statements; from the configuration (DATABASE_PIPELINE), read once at start. */
export interface DatabaseOptions {
  /**
   * true: each group of a transaction's statements as one pipeline (pipeline.ts, on
   * node-postgres's internals); false: one at a time through the driver's public API
   * (runInTurn), the same statements in the same order — the switch for a `pg` whose
   * internals changed (README.md in this folder).
   */
  pipeline: boolean;
}

/**
 * pipeline.ts, loaded only when it is used: with DATABASE_PIPELINE=off nothing of
 * node-postgres's internals is touched, not even by loading it.
 */
function loadPipeline(): { runPipeline: GroupRunner } {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('./pipeline') as { runPipeline: GroupRunner };
}

/**
 * How repositories run statements (built with the `sql` tag). The only place that
 * decodes the driver's results, so no caller handles TypeORM's `[rows, affected]`.
 */
@Injectable()
export class Database {
  /** pipeline.ts, when a group of a transaction's statements goes as a pipeline (DatabaseOptions.pipeline); chosen once, here. */
  private readonly pipeline?: { runPipeline: GroupRunner };

  constructor(
    readonly dataSource: DataSource,
    options: DatabaseOptions = { pipeline: true },
  ) {
    if (options.pipeline) {
      this.pipeline = loadPipeline();
    }
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
    return (await this.dispatch(statementOf(query, name))).records as R[];
  }

  /**
   * Independent writes (none reads another's effect; see WriteBatch) as one statement:
   * run now, in `unit`'s transaction or on their own; or, when `unit` is a batch,
   * queued to join its one statement. With `committed`, every statement has a
   * RETURNING clause and `committed` gets their rows (one list per statement) once
   * they have committed — never after a rollback — to wake whoever handles them.
   */
  async write(
    statements: ReadonlyArray<Sql | ShapedWrite>,
    unit?: Tx | WriteBatch,
    committed?: (rows: BatchRows[]) => void,
  ): Promise<void> {
    if (unit instanceof WriteBatch) {
      const rows: BatchRows[] = statements.map(() => []);
      statements.forEach((statement, i) => unit.write(statement, committed && ((returned) => (rows[i] = returned))));
      if (committed) {
        unit.afterCommit(() => committed(rows));
      }
      return;
    }
    const members = statements.map((write) => ({ write, returned: committed }));
    const result = await this.rows<{ member: number; row: Record<string, unknown> }>(
      statements.length === 1 && !committed ? sqlOf(statements[0]) : batchStatement(members),
      unit,
    );
    if (!committed) {
      return;
    }
    const rows: BatchRows[] = statements.map(() => []);
    for (const { member, row } of result) {
      rows[member].push(row);
    }
    if (unit) {
      afterCommit(unit, () => committed(rows));
    } else {
      committed(rows);
    }
  }

  /**
   * A unit of work that reads nothing: `work` queues its writes in a WriteBatch, which
   * is sent as one statement — its own transaction, one round trip, no BEGIN/COMMIT —
   * prepared under a name of its text (a few shapes, each planned once per
   * connection). Then each member gets its rows and the after-commit hooks run.
   * `work` may be async, but nothing it awaits reads the database: a write queued in
   * the batch resolves at once.
   *
   * Group commit: while BATCHES_SENDING statements of a batch's kind (WriteBatch.kind:
   * its members' texts and shapes) are on their way, batches of that kind wait, and go
   * together as one statement when one returns (at most BATCHES_TOGETHER), the members
   * of one WriteShape merged: under load many units of work cost one round trip, one
   * commit and one INSERT a table. Alone, a batch goes at once. Should a statement of several
   * fail on a constraint (a retried send, say), each of its batches goes again alone,
   * to be answered for itself.
   */
  async batch<T>(work: (batch: WriteBatch) => T | Promise<T>): Promise<T> {
    const batch = new WriteBatch();
    const result = await work(batch);
    if (batch.isEmpty) {
      throw new Error('a batch without writes');
    }
    await new Promise<void>((resolve, reject) => this.enqueue(batch.kind(), { batch, resolve, reject }));
    return result;
  }

  /** Batches waiting for a statement of their kind to return, by kind. */
  private readonly waiting = new Map<string, PendingBatch[]>();
  /** How many statements of each kind are on their way. */
  private readonly sending = new Map<string, number>();

  private enqueue(kind: string, pending: PendingBatch): void {
    const queue = this.waiting.get(kind);
    if (queue) {
      queue.push(pending);
    } else if ((this.sending.get(kind) ?? 0) < BATCHES_SENDING) {
      void this.sendBatches(kind, [pending]);
    } else {
      this.waiting.set(kind, [pending]);
    }
  }

  /** Sends batches of one kind as one statement; once it returns, the next waiting ones go. */
  private async sendBatches(kind: string, group: PendingBatch[]): Promise<void> {
    this.sending.set(kind, (this.sending.get(kind) ?? 0) + 1);
    try {
      await this.commitTogether(group);
    } finally {
      const left = this.sending.get(kind)! - 1;
      if (left > 0) {
        this.sending.set(kind, left);
      } else {
        this.sending.delete(kind);
      }
      const queue = this.waiting.get(kind);
      if (queue) {
        const next = queue.splice(0, BATCHES_TOGETHER);
        if (queue.length === 0) {
          this.waiting.delete(kind);
        }
        void this.sendBatches(kind, next);
      }
    }
  }

  /** One statement for the group; each batch settled and answered (never throws). */
  private async commitTogether(group: readonly PendingBatch[]): Promise<void> {
    // One batch is its own statement, all its rows its own; several go together (WriteBatch.together).
    let sent: { statement: Sql; split: (rows: TaggedRow[]) => TaggedRow[][] };
    let returned: TaggedRow[];
    try {
      sent =
        group.length === 1
          ? { statement: group[0].batch.statement(), split: (rows) => [rows] }
          : WriteBatch.together(group.map((pending) => pending.batch));
      returned = await this.rows<TaggedRow>(sent.statement);
    } catch (error) {
      // A statement of several failed as a whole — one batch broke a constraint (a retried
      // send), carried a value PostgreSQL refused, met a deadlock: each goes again alone,
      // to be answered for itself.
      if (group.length > 1) {
        await Promise.all(group.map((pending) => this.commitTogether([pending])));
      } else {
        group[0].reject(error);
      }
      return;
    }
    // Committed: nothing is sent again from here. A row a merged member cannot hand to
    // its batch is a WriteShape declared wrong; every batch of the group is told.
    let rows: TaggedRow[][];
    try {
      rows = sent.split(returned);
    } catch (error) {
      for (const pending of group) {
        pending.reject(error);
      }
      return;
    }
    // Settled without holding up the next group: the after-commit hooks run on their own.
    group.forEach((pending, i) => {
      void pending.batch.settle(rows[i]).then(pending.resolve, (error: unknown) => pending.reject(error));
    });
  }

  /**
   * A batch filled inside a transaction, sent as one statement of it (nothing when it
   * is empty) together with the transaction's next statement — the read that must see
   * it, or COMMIT — in one round trip (or with a statement already asked for in this
   * turn of the event loop, after it). Each member gets its rows then; its after-commit
   * hooks wait for the transaction's commit. Should it fail, so does the statement it
   * went with, and the transaction. The task journal sends its writes this way.
   */
  send(batch: WriteBatch, tx: Tx): void {
    if (batch.isEmpty) {
      return;
    }
    this.handOver(tx, batch.statement(), (result) =>
      batch.settle(result.rows as TaggedRow[], (hook) => afterCommit(tx, hook)),
    );
  }

  /**
   * A statement the transaction goes on only if it succeeds — a check that raises when
   * what it checks does not hold — sent as Database.send sends a batch: together with
   * the transaction's next statement, ahead of it (after any asked for in this turn of
   * the event loop), in the same round trip. Its rows are not read; should it fail, so
   * does the statement it went with, and the transaction, with the check's error.
   */
  sendCheck(check: Sql, tx: Tx): void {
    this.handOver(tx, check, () => undefined);
  }

  /** A statement that goes with the transaction's next one (send, sendCheck); its failure is that statement's. */
  private handOver(tx: Tx, query: Sql, answered: Queued['answered']): void {
    this.accepting(tx);
    const queued: Queued = {
      statement: statementOf(query),
      answered,
      failed: () => undefined, // the statement it went with fails too
    };
    (tx.asked.length > 0 ? tx.asked : tx.waiting).push(queued);
  }

  /** Whether the database answers (readiness); throws when it does not. */
  async ping(): Promise<void> {
    await this.run(sql`SELECT 1`);
  }

  /**
   * Runs `work` in a transaction on a connection of its own, and commits; rolls back
   * if `work` (or a before-commit hook) throws. Commit hooks (unit-of-work.ts) run at
   * its end. BEGIN goes with the first statement and COMMIT with the last writes, so a
   * transaction costs no round trip of its own for either.
   */
  async transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    const { client, release } = await this.checkout();
    const tx = new Tx(client);
    try {
      let result: T;
      try {
        result = await work(tx);
        for (let hook = tx.before.shift(); hook; hook = tx.before.shift()) {
          await hook();
        }
        await this.commit(tx);
      } catch (error) {
        tx.ended = true;
        tx.settle(); // nothing of it is handed on: whoever waits for it need not wait for the ROLLBACK
        for (const queued of [...tx.finals.splice(0), ...tx.asked.splice(0), ...tx.waiting.splice(0)]) {
          queued.failed(error);
        }
        await tx.tail;
        if (!tx.begun) {
          release();
        } else {
          try {
            await client.query({ text: 'ROLLBACK', values: [] });
            release();
          } catch (rollbackFailed) {
            release(rollbackFailed); // the connection is not reusable: the pool drops it
          }
        }
        throw error;
      }
      release();
      for (const hook of tx.after) {
        await hook();
      }
      return result;
    } finally {
      tx.settle();
    }
  }

  /**
   * Every statement goes straight to the driver — the pool, or the transaction's own
   * connection — as a prepared statement named by its text (statementName; unnamed,
   * so planned for its values each run, when marked sql.plannedPerRun), skipping
   * TypeORM's per-query QueryRunner. On the pool, a statement without parameters runs
   * as a simple query (it may hold several statements: the migrations' do); in a
   * transaction every statement is a single one of the extended protocol. Failures are
   * wrapped as TypeORM's QueryFailedError, as before, so error handling sees one shape.
   */
  protected async run(query: Sql, tx?: Tx): Promise<{ records: unknown[]; affected?: number }> {
    const statement = statementOf(query);
    if (!tx) {
      return this.dispatch(statement);
    }
    const result = await new Promise<StatementResult>((answered, failed) => {
      if (tx instanceof AtCommit) {
        this.accepting(tx.of);
        tx.of.finals.push({ statement, answered, failed });
      } else {
        this.accepting(tx);
        this.queue(tx, { statement, answered, failed });
      }
    });
    return { records: result.rows, affected: result.rowCount ?? undefined };
  }

  /** Throws unless statements may still join `tx`. */
  private accepting(tx: Tx): void {
    if (tx instanceof AtCommit) {
      throw new Error('a write needs the transaction itself, not AtCommit');
    }
    if (!tx.accepts()) {
      throw new Error('the transaction this statement was meant for has ended');
    }
  }

  /**
   * A statement of `tx`. Statements asked for together — in the same turn of the event
   * loop, as with Promise.all — go together, after what must go before them: BEGIN, if
   * they are the first; the writes waiting (Database.send). One pipeline, one round
   * trip (one at a time with DATABASE_PIPELINE=off); each is answered in order, the
   * waiting writes' members first.
   */
  private queue(tx: Tx, statement: Queued): void {
    tx.asked.push(statement);
    if (tx.asked.length === 1) {
      queueMicrotask(() => this.sendAsked(tx));
    }
  }

  private sendAsked(tx: Tx): void {
    const group = [...tx.waiting.splice(0), ...tx.asked.splice(0)];
    if (group.length === 0) {
      return;
    }
    const statements = [...(tx.begun ? [] : [BEGIN]), ...group.map((queued) => queued.statement)];
    tx.begun = true;
    tx.tail = tx.tail.then(async () => {
      try {
        const sent = this.pipeline
          ? this.pipeline.runPipeline(tx.client, statements)
          : runInTurn(tx.client, statements);
        const results = await sent.catch((error: unknown) => {
          if (!(error instanceof PipelineError)) {
            throw error;
          }
          const failed = statements[error.index];
          throw new QueryFailedError(failed.text, [...failed.values], error.cause);
        });
        const own = results.slice(statements.length - group.length);
        for (const [i, queued] of group.entries()) {
          await queued.answered(own[i]);
        }
      } catch (error) {
        for (const queued of group) {
          queued.failed(error);
        }
      }
    });
  }

  /**
   * COMMIT, with the writes still waiting and then the reads that go with it
   * (AtCommit) before it; nothing joins the transaction once it is on its way. Sends
   * nothing for a transaction that ran nothing.
   */
  private async commit(tx: Tx): Promise<void> {
    tx.closing = true;
    if (tx.begun || tx.waiting.length > 0 || tx.finals.length > 0) {
      tx.waiting.push(...tx.finals.splice(0));
      await new Promise<StatementResult>((answered, failed) => this.queue(tx, { statement: COMMIT, answered, failed }));
    }
    tx.ended = true;
  }

  private get pool(): Pool {
    return (this.dataSource.driver as unknown as { master: Pool }).master;
  }

  private checkout(): Promise<{ client: StatementClient; release: (error?: unknown) => void }> {
    return new Promise((resolve, reject) =>
      this.pool.connect((error, client, release) => (error ? reject(error) : resolve({ client, release }))),
    );
  }

  /** A statement on a connection of its own from the pool. */
  private async dispatch({ name, text, values }: Statement): Promise<{ records: unknown[]; affected?: number }> {
    try {
      const result = await this.pool.query({ name, text, values });
      return { records: result.rows ?? [], affected: result.rowCount ?? undefined };
    } catch (error) {
      throw new QueryFailedError(text, [...values], error as Error);
    }
  }
}

/**
 * A statement as the driver takes it: under the caller's name (Database.prepared), else
 * named by its text when it has parameters and may keep a plan — a lookup that hashes
 * the whole text, so it is not made when a name is given.
 */
function statementOf(query: Sql, name?: string): Statement {
  return {
    name: name ?? (query.values.length > 0 && !query.plannedPerRun ? statementName(query.text) : undefined),
    text: query.text,
    // Times as ISO strings (every column is timestamptz): the driver's own conversion is slower.
    values: query.values.map((value) =>
      value instanceof Date && !Number.isNaN(value.getTime()) ? value.toISOString() : value,
    ),
  };
}
