import { DataSource } from 'typeorm';
import {
  ConsoleEmailKey1796439327973,
  emailKeyAtMigration,
} from '../../src/database/migrations/1796439327973-console-email-key';
import { createTestDatabase, dropDatabase, urlFor } from '../support/database';

/** The migration that keys Console emails, run again on users the schema before it held. */
describe('migration: console_users.email_key', () => {
  let name: string;
  let db: DataSource;
  const migration = new ConsoleEmailKey1796439327973();
  const run = async (step: 'up' | 'down') => {
    const runner = db.createQueryRunner();
    try {
      await runner.startTransaction();
      await migration[step](runner);
      await runner.commitTransaction();
    } catch (error) {
      await runner.rollbackTransaction();
      throw error;
    } finally {
      await runner.release();
    }
  };
  const insertUser = (organizationId: string, email: string) =>
    db.query(`INSERT INTO console_users (organization_id, email, password_hash) VALUES ($1, $2, 'x') RETURNING id`, [
      organizationId,
      email,
    ]);

  beforeAll(async () => {
    name = await createTestDatabase();
    db = await new DataSource({ type: 'postgres', url: urlFor(name) }).initialize();
  });
  afterAll(async () => {
    await db?.destroy();
    await dropDatabase(name);
  });

  it('keys existing users as the service does, and stops on two users with one key', async () => {
    await run('down');
    const [{ id: organizationId }] = await db.query(`INSERT INTO organizations (name) VALUES ('o') RETURNING id`);
    await insertUser(organizationId, 'Dana@Example.TEST');
    await insertUser(organizationId, 'Jose\u0301@example.test');
    // One address in NFC and in NFD: PostgreSQL's lower(email) index let both in.
    await insertUser(organizationId, 'jos\u00e9@example.test');
    await expect(run('up')).rejects.toThrow(/one address/);

    await db.query(`DELETE FROM console_users WHERE email = $1`, ['jos\u00e9@example.test']);
    await run('up');
    const rows = await db.query(`SELECT email, email_key FROM console_users ORDER BY email`);
    expect(rows).toEqual([
      { email: 'Dana@Example.TEST', email_key: 'dana@example.test' },
      { email: 'Jose\u0301@example.test', email_key: 'jos\u00e9@example.test' },
    ]);
    await expect(insertUser(organizationId, 'x@example.test')).rejects.toThrow(/email_key/);
  });

  it('reverts, and stops on two users that lower(email) folds into one address, naming them', async () => {
    const [{ id: organizationId }] = await db.query(`INSERT INTO organizations (name) VALUES ('p') RETURNING id`);
    const insertKeyed = async (email: string) =>
      (
        await db.query(
          `INSERT INTO console_users (organization_id, email, email_key, password_hash) VALUES ($1, $2, $3, 'x') RETURNING id`,
          [organizationId, email, emailKeyAtMigration(email)],
        )
      )[0].id as string;
    // Two addresses by their keys (İ lowercases to i + U+0307), one to PostgreSQL's lower() in this database.
    const alice = await insertKeyed('alice@example.test');
    const dotted = await insertKeyed('alİce@example.test');
    const [{ folded }] = await db.query(`SELECT lower($1) = lower($2) AS folded`, [
      'alice@example.test',
      'alİce@example.test',
    ]);
    expect(folded).toBe(true);
    const refused = run('down');
    await expect(refused).rejects.toThrow(/lower\(email\)/);
    await expect(refused).rejects.toThrow(alice);
    await expect(refused).rejects.toThrow(dotted);
    // Nothing changed: the keys are still there.
    expect(await db.query(`SELECT email_key FROM console_users WHERE id = $1`, [dotted])).toEqual([
      { email_key: emailKeyAtMigration('alİce@example.test') },
    ]);

    await db.query(`DELETE FROM console_users WHERE id = $1`, [dotted]);
    await run('down');
    await expect(insertUser(organizationId, 'ALICE@example.test')).rejects.toThrow(/uq_console_users_email/);
    await run('up');
  });
});
