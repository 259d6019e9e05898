import { Client } from 'pg';

/**
 * The round trips the app makes to PostgreSQL while `work` runs, in order: each one's
 * statement, or the statements of a pipeline (src/database/pipeline.ts) joined by
 * `;\n` (the test's own queries through `t.db` count too: keep them out of `work`).
 * Timers of the app's own — the delivery dispatcher's claim, the key usage flush — are
 * left out.
 */
export async function statementsOf(work: () => Promise<unknown>): Promise<string[]> {
  const sent: string[] = [];
  const query = Client.prototype.query as (...args: unknown[]) => unknown;
  const spy = jest.spyOn(Client.prototype, 'query').mockImplementation(function (this: Client, ...args: unknown[]) {
    const first = args[0] as string | { text: string };
    sent.push((typeof first === 'string' ? first : first.text).trim());
    return query.apply(this, args) as never;
  });
  try {
    await work();
  } finally {
    spy.mockRestore();
  }
  return sent.filter((text) => !/deliveries d SET attempts|SET last_used_at/.test(text));
}
