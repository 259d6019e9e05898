import { Client } from 'pg';
import { DEFAULT_SERVER_URL } from './database';

/**
 * Which PostgreSQL server a test run uses:
 * - `TEST_DATABASE=embedded`: one of the run's own (own-postgres.ts);
 * - `TEST_DATABASE_SERVER=postgres://user@host:port`: that one;
 * - neither: the default (`postgres` with trust auth on 127.0.0.1:5432) when it answers
 *   and lets `postgres` in, else one of the run's own.
 */
export type TestServerChoice =
  { kind: 'given'; url: string } | { kind: 'default'; url: string } | { kind: 'own'; reason: string };

export async function chooseTestServer(
  env: NodeJS.ProcessEnv,
  defaultUrl = DEFAULT_SERVER_URL,
): Promise<TestServerChoice> {
  const mode = env.TEST_DATABASE?.trim();
  if (mode && mode !== 'embedded') {
    throw new Error(`TEST_DATABASE=${mode}: the only value is "embedded" (unset: a server, or the run's own)`);
  }
  if (mode === 'embedded') {
    return { kind: 'own', reason: 'TEST_DATABASE=embedded' };
  }
  if (env.TEST_DATABASE_SERVER) {
    return { kind: 'given', url: env.TEST_DATABASE_SERVER };
  }
  const client = new Client({ connectionString: `${defaultUrl}/postgres`, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return { kind: 'default', url: defaultUrl };
  } catch (error) {
    const { host } = new URL(defaultUrl);
    const why = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    return { kind: 'own', reason: `no usable PostgreSQL at ${host} (${why})` };
  } finally {
    await client.end().catch(() => undefined);
  }
}
