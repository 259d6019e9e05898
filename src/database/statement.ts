/** A statement as the driver takes it: a prepared statement's name (or none), its text and its values. */
export interface Statement {
  name?: string;
  text: string;
  values: readonly unknown[];
}

/** What one statement of a group returned. */
export interface StatementResult {
  rows: unknown[];
  rowCount: number | null;
}

/** A statement of a group failed: which one, and PostgreSQL's error. Those after it did not run. */
export class PipelineError extends Error {
  constructor(
    readonly index: number,
    override readonly cause: Error,
  ) {
    super(cause.message);
  }
}

/** A connection as far as statements go: node-postgres's Client, or the embedded driver's. */
export interface StatementClient {
  query(config: {
    name?: string;
    text: string;
    values: readonly unknown[];
  }): Promise<{ rows?: unknown[]; rowCount?: number | null }>;
}

/** Runs a group of statements on one connection and answers with each one's result (runInTurn, runPipeline). */
export type GroupRunner = (client: StatementClient, statements: readonly Statement[]) => Promise<StatementResult[]>;

/**
 * Runs `statements` on one connection one at a time, each a `client.query({ name, text,
 * values })` of the driver's public API (a named one stays a prepared statement, which
 * the driver prepares once per connection), each waiting for the one before: a round
 * trip a statement. Stops at the first failure. What the embedded driver always does,
 * and what node-postgres does with DATABASE_PIPELINE=off (README.md in this folder).
 */
export async function runInTurn(client: StatementClient, statements: readonly Statement[]): Promise<StatementResult[]> {
  const results: StatementResult[] = [];
  for (const [index, statement] of statements.entries()) {
    try {
      const result = await client.query({ name: statement.name, text: statement.text, values: statement.values });
      results.push({ rows: result.rows ?? [], rowCount: result.rowCount ?? null });
    } catch (error) {
      throw new PipelineError(index, error as Error);
    }
  }
  return results;
}
