import type { DataSourceOptions } from 'typeorm';
import type { AppConfig } from '../config/config';
import { MIGRATIONS } from './migrations';
import { pgliteDriver } from './pglite-pool';

/**
 * The one DataSource definition, shared by the server (AppModule) and the migration
 * CLI (ormconfig.ts). Schema changes only ever go through MIGRATIONS.
 */
export function dataSourceOptions(
  config: Pick<AppConfig, 'databaseUrl' | 'dataDir'>,
  entities: DataSourceOptions['entities'] = [],
): DataSourceOptions {
  const common = {
    type: 'postgres' as const,
    entities,
    migrations: MIGRATIONS,
    migrationsTableName: 'schema_migrations',
    migrationsTransactionMode: 'each' as const,
    synchronize: false,
    migrationsRun: false, // the server runs them itself, under an advisory lock
    logging: false,
  };
  if (config.databaseUrl) {
    // JIT off: PostgreSQL compiles a plan whose estimate passes jit_above_cost, and the
    // service's statements run in milliseconds — a ranked search's estimate (a filter it
    // cannot count) cost 150 ms of compiling for a 10 ms statement (docs/performance.md).
    return {
      ...common,
      url: config.databaseUrl,
      poolSize: 20,
      applicationName: 'a2a-service',
      extra: { options: '-c jit=off' },
    };
  }
  // Embedded PostgreSQL (PGlite), persisted under DATA_DIR, one serialized connection.
  return { ...common, driver: pgliteDriver, extra: { dataDir: config.dataDir }, poolSize: 1 };
}

export function isEmbedded(config: Pick<AppConfig, 'databaseUrl'>): boolean {
  return !config.databaseUrl;
}
