import type { DataSource } from 'typeorm';

/** Arbitrary but fixed: every instance of this service contends for the same lock. */
const MIGRATION_LOCK_KEY = 727_274_001;

/**
 * Applies pending migrations. On a shared PostgreSQL several instances may start at
 * once, so the run happens under a session-level advisory lock: the first instance
 * migrates, the others wait, then find nothing pending.
 */
export async function runMigrations(dataSource: DataSource, embedded: boolean): Promise<string[]> {
  if (embedded) {
    return (await dataSource.runMigrations({ transaction: 'each' })).map((m) => m.name);
  }
  const lock = dataSource.createQueryRunner();
  try {
    await lock.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    return (await dataSource.runMigrations({ transaction: 'each' })).map((m) => m.name);
  } finally {
    await lock.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    await lock.release();
  }
}

/** True when every known migration has been applied (used by /readyz). */
export async function migrationsApplied(dataSource: DataSource): Promise<boolean> {
  return !(await dataSource.showMigrations());
}
