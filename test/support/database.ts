import { createHash, randomBytes } from 'node:crypto';
import { Client } from 'pg';

/**
 * Each test file gets its own database, cloned from a template that globalSetup
 * migrated once. Names carry a hash of the checkout path, so two checkouts can run
 * their suites on one server at the same time.
 *
 * The server is TEST_DATABASE_SERVER: given by whoever runs the tests, or set by
 * globalSetup (test-server.ts) for the whole run — the workers inherit it.
 */
export const DEFAULT_SERVER_URL = 'postgres://postgres@127.0.0.1:5432';
export const serverUrl = () => process.env.TEST_DATABASE_SERVER ?? DEFAULT_SERVER_URL;
const scope = createHash('sha256').update(process.cwd()).digest('hex').slice(0, 8);
export const TEMPLATE_DB = `a2a_tpl_${scope}`;
export const TEST_DB_PREFIX = `a2a_t_${scope}_`;

export const urlFor = (database: string) => `${serverUrl()}/${database}`;

export async function withServer<T>(work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: urlFor('postgres') });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export async function createTestDatabase(): Promise<string> {
  const name = TEST_DB_PREFIX + randomBytes(6).toString('hex');
  await withServer((c) => c.query(`CREATE DATABASE "${name}" TEMPLATE "${TEMPLATE_DB}"`));
  return name;
}

export async function dropDatabase(name: string): Promise<void> {
  await withServer((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
}
