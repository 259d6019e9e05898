import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../src/database/data-source';
import { dropDatabase, TEMPLATE_DB, TEST_DB_PREFIX, urlFor, withServer } from './database';
import { startOwnPostgres, type OwnPostgres } from './own-postgres';
import { chooseTestServer } from './test-server';

/** The run's own server, for globalTeardown (which runs in this same process). */
export const OWN_SERVER = Symbol.for('a2a.test.ownPostgres');

/**
 * Picks the run's PostgreSQL server (test-server.ts), starting one of its own when needed,
 * and builds the migrated template every test database is cloned from. The server's URL
 * goes into TEST_DATABASE_SERVER, which the workers Jest starts next inherit.
 */
export default async function globalSetup(): Promise<void> {
  const choice = await chooseTestServer(process.env);
  if (choice.kind === 'own') {
    const server = await startOwnPostgres();
    (globalThis as Record<symbol, OwnPostgres>)[OWN_SERVER] = server;
    process.env.TEST_DATABASE_SERVER = server.url;
    process.env.TEST_DATABASE_OWN_DIR = server.dataDir;
    process.stderr.write(`\ntests: ${choice.reason}: started PostgreSQL 16 on ${server.url.split('@')[1]}\n`);
  }
  const stale = await withServer((c) =>
    c.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname LIKE $1 OR datname = $2`, [
      `${TEST_DB_PREFIX}%`,
      TEMPLATE_DB,
    ]),
  );
  for (const { datname } of stale.rows) {
    await dropDatabase(datname);
  }
  await withServer((c) => c.query(`CREATE DATABASE "${TEMPLATE_DB}"`));
  const dataSource = await new DataSource(
    dataSourceOptions({ databaseUrl: urlFor(TEMPLATE_DB), dataDir: '' }),
  ).initialize();
  try {
    await dataSource.runMigrations({ transaction: 'each' });
  } finally {
    await dataSource.destroy();
  }
}
