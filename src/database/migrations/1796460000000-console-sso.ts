import type { MigrationInterface, QueryRunner } from 'typeorm';
import { emailKeyAtMigration } from './1796439327973-console-email-key';

/**
 * Single sign-on to the Console (docs/api.md §13, single sign-on):
 *
 * - `organizations.password_sign_in`: false turns password sign-in off for the
 *   organization's members (they sign in with the provider).
 * - `organization_email_domains`: the email domains whose verified addresses join the
 *   organization at their first single sign-on. A domain belongs to at most one
 *   organization (the primary key), lower case.
 * - `console_sso_logins`: a sign-in under way, from the redirect to the provider to its
 *   callback — the state, nonce and PKCE verifier, keyed by the SHA-256 of the random
 *   value of the HttpOnly cookie that binds it to the browser. Used once; expired rows
 *   go with the retention pass.
 * - `console_invites.email_key`: an open invitation is found by the invited address (the
 *   person who signs in with it accepts it), compared as Console users' emails are
 *   (src/console/email-key.ts); existing invitations get their key here.
 */
export class ConsoleSso1796460000000 implements MigrationInterface {
  name = 'ConsoleSso1796460000000';

  async up(q: QueryRunner): Promise<void> {
    const invites = (await q.query(`SELECT id, email FROM console_invites`)) as Array<{ id: string; email: string }>;
    await q.query(`ALTER TABLE console_invites ADD COLUMN email_key varchar(1000)`);
    if (invites.length > 0) {
      await q.query(
        `UPDATE console_invites i SET email_key = k.email_key
           FROM unnest($1::uuid[], $2::varchar[]) AS k(id, email_key) WHERE i.id = k.id`,
        [invites.map((invite) => invite.id), invites.map((invite) => emailKeyAtMigration(invite.email))],
      );
    }
    await q.query(`
      ALTER TABLE console_invites ALTER COLUMN email_key SET NOT NULL;
      CREATE INDEX ix_console_invites_email_key_open ON console_invites (email_key, created_at DESC)
        WHERE accepted_at IS NULL;

      ALTER TABLE organizations ADD COLUMN password_sign_in boolean NOT NULL DEFAULT true;

      CREATE TABLE organization_email_domains (
        domain           varchar(253) PRIMARY KEY,
        organization_id  uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        created_at       timestamptz(3) NOT NULL DEFAULT now(),
        CONSTRAINT ck_organization_email_domains_domain
          CHECK (domain = lower(domain) AND domain ~ '^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$')
      );
      CREATE INDEX ix_organization_email_domains_organization ON organization_email_domains (organization_id, domain);

      CREATE TABLE console_sso_logins (
        browser_hash   bytea PRIMARY KEY,
        state          varchar(64) NOT NULL,
        nonce          varchar(64) NOT NULL,
        code_verifier  varchar(128) NOT NULL,
        next_path      varchar(512),
        created_at     timestamptz(3) NOT NULL DEFAULT now(),
        expires_at     timestamptz(3) NOT NULL
      );
      CREATE INDEX ix_console_sso_logins_expires ON console_sso_logins (expires_at);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TABLE console_sso_logins;
      DROP TABLE organization_email_domains;
      ALTER TABLE organizations DROP COLUMN password_sign_in;
      DROP INDEX ix_console_invites_email_key_open;
      ALTER TABLE console_invites DROP COLUMN email_key;
    `);
  }
}
