import { dropDatabase, TEMPLATE_DB } from './database';
import { OWN_SERVER } from './global-setup';
import type { OwnPostgres } from './own-postgres';

export default async function globalTeardown(): Promise<void> {
  const own = (globalThis as Record<symbol, OwnPostgres | undefined>)[OWN_SERVER];
  if (own) {
    await own.stop(); // the template goes with it
    // A next run in this process (jest --watch) chooses its server again.
    delete process.env.TEST_DATABASE_SERVER;
    delete process.env.TEST_DATABASE_OWN_DIR;
    delete (globalThis as Record<symbol, unknown>)[OWN_SERVER];
    return;
  }
  await dropDatabase(TEMPLATE_DB);
}
