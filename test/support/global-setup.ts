import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../src/database/data-source';
import { dropDatabase, TEMPLATE_DB, TEST_DB_PREFIX, urlFor, withServer } from './database';

/** Builds the migrated template every test database is cloned from. */
export default async function globalSetup(): Promise<void> {
  const stale = await withServer((c) =>
    c.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname LIKE $1 OR datname = $2`, [
      `${TEST_DB_PREFIX}%`,
      TEMPLATE_DB,
    ]),
  );
  for (const { datname } of stale.rows) await dropDatabase(datname);
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
