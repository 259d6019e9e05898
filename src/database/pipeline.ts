import { Client, Query } from 'pg';
import { PipelineError, runInTurn, type Statement, type StatementClient, type StatementResult } from './statement';

/**
 * Runs `statements` in order on one connection and answers with each one's result.
 *
 * On node-postgres they go as one pipeline of the extended query protocol: every
 * statement's Parse (when its connection has not prepared it yet), Bind, Describe and
 * Execute, then one Sync — a single socket write and a single round trip, however many
 * statements. PostgreSQL runs them one after the other; should one fail, it skips the
 * rest up to the Sync (inside a transaction block the transaction is then aborted, as
 * it would be had they gone one by one). A transaction uses this to send its BEGIN with
 * its first statement and its COMMIT with its last writes (Database.transaction).
 *
 * node-postgres runs one query object at a time; its `pipeline` client mode sends the
 * next query without waiting, but each query still goes in a write of its own with a
 * Sync of its own, and a socket write is what costs here (a fifth of the server's CPU
 * under load was writev). So this is a query object of ours (node-postgres's
 * Submittable interface, built on its Query) that writes several statements' messages
 * and reads their several results. It keeps the connection's record of prepared
 * statements as node-postgres does: a name is "submitted" while its Parse is on the
 * way, "parsed" once PostgreSQL confirms it. It leans on node-postgres's internals
 * (the connection's message methods, Query's result fields), so `pg` is pinned to an
 * exact version, pipeline-internals.spec.ts fails when they change,
 * test/database/transaction checks the bookkeeping, and DATABASE_PIPELINE=off runs
 * without this module (README.md in this folder).
 *
 * On another driver (the embedded PGlite) the statements run one by one (runInTurn).
 */
export async function runPipeline(
  client: StatementClient,
  statements: readonly Statement[],
): Promise<StatementResult[]> {
  if (client instanceof Client) {
    // Values as the wire takes them, before anything is written: one the driver cannot
    // convert fails here, with the connection untouched.
    const wire = statements.map((statement, index) => {
      try {
        return { ...statement, values: statement.values.map((value) => prepareValue(value)) };
      } catch (error) {
        throw new PipelineError(index, error as Error);
      }
    });
    return new Promise<StatementResult[]>((resolve, reject) => {
      client.query(new PipelineQuery(wire, resolve, reject) as unknown as Query);
    });
  }
  return runInTurn(client, statements);
}

/** node-postgres's connection, as far as a pipeline writes to it. */
interface WireConnection {
  parsedStatements: Record<string, string>;
  submittedNamedStatements: Record<string, string>;
  parse(query: { text: string; name: string; types: unknown[] }): void;
  bind(config: { portal: string; statement: string; values: readonly unknown[] }): void;
  describe(message: { type: 'P'; name: string }): void;
  execute(config: { portal: string; rows: number }): void;
  sync(): void;
  on(event: 'parseComplete', listener: () => void): void;
  removeListener(event: 'parseComplete', listener: () => void): void;
}

interface PgResult {
  command: string | null;
  rows: unknown[];
  rowCount: number | null;
}

// node-postgres's own value conversion for parameters (the same a plain query uses).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { prepareValue } = require('pg/lib/utils') as { prepareValue: (value: unknown) => unknown };

/**
 * The query object of a pipeline. node-postgres's Query already collects several
 * results (a multi-statement simple query), one per CommandComplete; what this adds
 * is writing several extended-protocol statements before one Sync.
 */
class PipelineQuery extends (Query as unknown as new (text: string) => {
  queryMode?: 'extended';
  _results: PgResult | PgResult[];
  /** A row the driver could not parse: the query fails once its statements have run. */
  _canceledDueToError: Error | false;
}) {
  /** Names whose Parse this pipeline sent, in order, until PostgreSQL confirms each. */
  private unconfirmed: Array<{ name: string; text: string }> = [];
  private connection?: WireConnection;
  private readonly confirm = () => {
    const next = this.unconfirmed.shift();
    if (!next?.name || !this.connection) {
      return;
    }
    this.connection.parsedStatements[next.name] = next.text;
    delete this.connection.submittedNamedStatements[next.name];
  };

  constructor(
    private readonly statements: readonly Statement[],
    private readonly resolve: (results: StatementResult[]) => void,
    private readonly reject: (error: unknown) => void,
  ) {
    // The text alone: node-postgres copies a config object property by property (its descriptors), a string it does not.
    super(statements.map((statement) => statement.text).join(';\n'));
    this.queryMode = 'extended';
  }

  /** Called by Query.submit with the socket corked: every message goes out in one write. */
  prepare(connection: WireConnection): void {
    this.connection = connection;
    connection.on('parseComplete', this.confirm);
    for (const { name = '', text, values } of this.statements) {
      const prepared =
        name !== '' &&
        (connection.parsedStatements[name] !== undefined || connection.submittedNamedStatements[name] !== undefined);
      if (!prepared) {
        connection.parse({ text, name, types: [] });
        if (name) {
          connection.submittedNamedStatements[name] = text;
        }
        this.unconfirmed.push({ name, text });
      }
      connection.bind({ portal: '', statement: name, values });
      connection.describe({ type: 'P', name: '' });
      connection.execute({ portal: '', rows: 0 });
    }
    connection.sync();
  }

  handleError(error: Error): void {
    this.finish();
    // Parses PostgreSQL skipped after the failure never happened: such a name is not prepared.
    for (const { name } of this.unconfirmed) {
      if (name) {
        delete this.connection?.submittedNamedStatements[name];
      }
    }
    const results = Array.isArray(this._results) ? this._results : [this._results];
    const completed = results.filter((result) => result.command !== null).length;
    this.reject(new PipelineError(Math.min(completed, this.statements.length - 1), error));
  }

  handleReadyForQuery(): void {
    if (this._canceledDueToError) {
      return this.handleError(this._canceledDueToError);
    }
    this.finish();
    const results = Array.isArray(this._results) ? this._results : [this._results];
    this.resolve(results.map((result) => ({ rows: result.rows, rowCount: result.rowCount })));
  }

  private finish(): void {
    this.connection?.removeListener('parseComplete', this.confirm);
  }
}
