import { Client } from 'pg';
import { currentRequestContext } from '../../src/common/request-context';
import { databasePipeline } from '../../src/config/config';
import { Database } from '../../src/database/database';
import type { Sql } from '../../src/database/sql';
import * as statement from '../../src/database/statement';
import type { TestApp } from './app';

/** Whether this run sends a transaction's statements as pipelines (DATABASE_PIPELINE, as the app reads it). */
export const pipelined = databasePipeline(process.env);

/**
 * The round trips the app makes to PostgreSQL while `work` runs, in order: each one's
 * statement, or the statements of a pipeline (src/database/pipeline.ts) joined by
 * `;\n` (the test's own queries through `t.db` count too: keep them out of `work`).
 * With DATABASE_PIPELINE=off, where a transaction's statements go one at a time, a
 * group of them that would have been one pipeline is recorded as one all the same
 * (joined by `;\n`), so the suites check the same grouping in both modes.
 * Timers of the app's own — the delivery dispatcher's claim, the upstream forwarder's
 * claim, the key usage flush — are left out.
 */
export async function statementsOf(work: () => Promise<unknown>): Promise<string[]> {
  const sent: string[] = [];
  /** Connections running a group one statement at a time: their statements are recorded as the group. */
  const inGroup = new Set<unknown>();
  const query = Client.prototype.query as (...args: unknown[]) => unknown;
  const spy = jest.spyOn(Client.prototype, 'query').mockImplementation(function (this: Client, ...args: unknown[]) {
    const first = args[0] as string | { text: string };
    if (!inGroup.has(this)) {
      sent.push((typeof first === 'string' ? first : first.text).trim());
    }
    return query.apply(this, args) as never;
  });
  const runInTurn = statement.runInTurn;
  const groups = jest.spyOn(statement, 'runInTurn').mockImplementation(async (client, statements) => {
    sent.push(statements.map(({ text }) => text.trim()).join(';\n'));
    inGroup.add(client);
    try {
      return await runInTurn(client, statements);
    } finally {
      inGroup.delete(client);
    }
  });
  try {
    await work();
  } finally {
    spy.mockRestore();
    groups.mockRestore();
  }
  return sent.filter(
    (text) => !/deliveries d\s+SET attempts|upstream_forwards f\s+SET attempts|SET last_used_at/.test(text),
  );
}

/**
 * The statements `app` runs on behalf of requests that carry `key` in X-API-Key, from
 * now until the returned function is called (which stops recording and returns them):
 * a named statement (Database.prepared) by its name, any other by its text. Every
 * statement goes through Database's runner (`run`) or `prepared`, and only those issued
 * in such a request's context are kept — background work (a dispatcher's poll, the key
 * usage flush) runs outside it, however it interleaves.
 */
export function statementsFor(app: TestApp, key: string): () => string[] {
  const db = app.app.get(Database) as unknown as Record<'run' | 'prepared', (...args: unknown[]) => Promise<unknown>>;
  const recorded: string[] = [];
  const spies = (['run', 'prepared'] as const).map((method) => {
    const original = db[method];
    return jest.spyOn(db, method).mockImplementation(function (this: unknown, ...args: unknown[]) {
      if (currentRequestContext()?.request?.headers['x-api-key'] === key) {
        recorded.push(typeof args[0] === 'string' ? args[0] : (args[0] as Sql).text);
      }
      return original.apply(this, args);
    });
  });
  return () => {
    for (const spy of spies) {
      spy.mockRestore();
    }
    return recorded;
  };
}
