import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * src/console/email-key.ts as of this migration, kept here (a migration stands on its
 * own); email-key.spec.ts checks the two agree.
 */
export const emailKeyAtMigration = (email: string): string => email.normalize('NFC').toLowerCase().normalize('NFC');

/**
 * Console emails are compared by `email_key` (src/console/email-key.ts: NFC, then
 * lowercased), computed by the service, instead of PostgreSQL's `lower(email)`, whose
 * result depends on the database's locale and differs from the service's own
 * lowercasing (`İ`): one spelling of an address could be another's account yet a fresh
 * login throttle bucket. The keys of existing users are computed here the same way;
 * two users whose emails have one key stop the migration, naming them, to be resolved
 * by hand.
 */
export class ConsoleEmailKey1796439327973 implements MigrationInterface {
  name = 'ConsoleEmailKey1796439327973';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE console_users ADD COLUMN email_key varchar(1000)`);
    const users = (await q.query(`SELECT id, email FROM console_users`)) as Array<{ id: string; email: string }>;
    const keys = users.map((user) => emailKeyAtMigration(user.email));
    const byKey = new Map<string, string[]>();
    users.forEach((user, i) => {
      const ids = byKey.get(keys[i]);
      if (ids) {
        ids.push(user.id);
      } else {
        byKey.set(keys[i], [user.id]);
      }
    });
    const shared = [...byKey.values()].filter((ids) => ids.length > 1);
    if (shared.length > 0) {
      throw new Error(`Console users whose emails are one address: ${shared.map((ids) => ids.join(' = ')).join('; ')}`);
    }
    if (users.length > 0) {
      await q.query(
        `UPDATE console_users u SET email_key = k.email_key
           FROM unnest($1::uuid[], $2::varchar[]) AS k(id, email_key) WHERE u.id = k.id`,
        [users.map((user) => user.id), keys],
      );
    }
    await q.query(`
      ALTER TABLE console_users ALTER COLUMN email_key SET NOT NULL;
      CREATE UNIQUE INDEX uq_console_users_email_key ON console_users (email_key);
      DROP INDEX uq_console_users_email;
    `);
  }

  /**
   * Back to `UNIQUE (lower(email))`. PostgreSQL's lower() folds some addresses the keys
   * tell apart into one (`alİce` and `alice`, in a libc locale): two such users stop
   * the revert, naming them, to be resolved by hand.
   */
  async down(q: QueryRunner): Promise<void> {
    const shared = (await q.query(
      `SELECT string_agg(id::text, ' = ' ORDER BY id) AS ids FROM console_users GROUP BY lower(email) HAVING count(*) > 1`,
    )) as Array<{ ids: string }>;
    if (shared.length > 0) {
      throw new Error(
        `Console users whose emails are one address to lower(email): ${shared.map((row) => row.ids).join('; ')}`,
      );
    }
    await q.query(`
      CREATE UNIQUE INDEX uq_console_users_email ON console_users (lower(email));
      ALTER TABLE console_users DROP COLUMN email_key;
    `);
  }
}
