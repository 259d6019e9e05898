import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Console teams (docs/api.md §13): invitations and the members' last sign-in.
 *
 * - An invitation's code is shown once; only its SHA-256 is stored (unique). An
 *   invitation is open while `accepted_at` is null and `expires_at` is ahead;
 *   accepting sets `accepted_at` (single use), withdrawing deletes the row.
 * - `console_users.last_login_at` is stamped whenever a session opens (signup,
 *   login, accepting an invitation).
 * - Two event types join the outbox: `console.member_added`, `console.member_removed`.
 */
export class ConsoleTeams1763700600000 implements MigrationInterface {
  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE console_users ADD COLUMN last_login_at timestamptz(3);

      CREATE TABLE console_invites (
        id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id  uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        email            varchar(254) NOT NULL,
        code_hash        bytea NOT NULL,
        invited_by       uuid REFERENCES console_users(id) ON DELETE SET NULL,
        created_at       timestamptz(3) NOT NULL DEFAULT now(),
        expires_at       timestamptz(3) NOT NULL,
        accepted_at      timestamptz(3),
        accepted_by      uuid REFERENCES console_users(id) ON DELETE SET NULL
      );
      CREATE UNIQUE INDEX uq_console_invites_code_hash ON console_invites (code_hash);
      CREATE INDEX ix_console_invites_organization_open ON console_invites (organization_id, created_at DESC, id DESC)
        WHERE accepted_at IS NULL;
      CREATE INDEX ix_console_users_organization_created ON console_users (organization_id, created_at DESC, id DESC);

      ALTER TABLE events DROP CONSTRAINT ck_events_type;
      ALTER TABLE events ADD CONSTRAINT ck_events_type CHECK (type IN (
        'task.created', 'task.message', 'task.status', 'task.artifact', 'api_key.created', 'api_key.revoked',
        'identity.claimed', 'identity.updated', 'contact_rule.created', 'contact_rule.updated', 'contact_rule.deleted',
        'console.member_added', 'console.member_removed',
        'ping'));
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DELETE FROM events WHERE type IN ('console.member_added', 'console.member_removed');
      ALTER TABLE events DROP CONSTRAINT ck_events_type;
      ALTER TABLE events ADD CONSTRAINT ck_events_type CHECK (type IN (
        'task.created', 'task.message', 'task.status', 'task.artifact', 'api_key.created', 'api_key.revoked',
        'identity.claimed', 'identity.updated', 'contact_rule.created', 'contact_rule.updated', 'contact_rule.deleted',
        'ping'));
      DROP INDEX ix_console_users_organization_created;
      DROP TABLE console_invites;
      ALTER TABLE console_users DROP COLUMN last_login_at;
    `);
  }
}
