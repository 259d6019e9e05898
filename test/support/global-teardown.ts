import { dropDatabase, TEMPLATE_DB } from './database';

export default async function globalTeardown(): Promise<void> {
  await dropDatabase(TEMPLATE_DB);
}
