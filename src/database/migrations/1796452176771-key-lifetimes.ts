import type { MigrationInterface, QueryRunner } from 'typeorm';

const EVENT_TYPES_BEFORE = `'task.created', 'task.message', 'task.status', 'task.artifact', 'api_key.created', 'api_key.revoked',
        'identity.claimed', 'identity.updated', 'contact_rule.created', 'contact_rule.updated', 'contact_rule.deleted',
        'console.member_added', 'console.member_removed',
        'ping'`;

/**
 * Key lifetimes (docs/api.md §2): a key may expire (`api_keys.expires_at`); an
 * organization may cap the lifetime of new keys (`organizations.max_key_lifetime_days`);
 * the `api_key.expiring` notice is sent once per key (`expiry_notified_at` marks it; the
 * partial index holds the keys the periodic pass still has to look at). A change of a
 * key's `expires_at` is announced to open calls like a change of its status (the
 * StandingChanges triggers); the passing of time is not announced, and open calls
 * compare the expiry they read themselves (CallStanding).
 */
export class KeyLifetimes1796452176771 implements MigrationInterface {
  name = 'KeyLifetimes1796452176771';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE api_keys ADD COLUMN expires_at timestamptz(3), ADD COLUMN expiry_notified_at timestamptz(3);
      CREATE INDEX ix_api_keys_expiry_notice ON api_keys (expires_at)
        WHERE status = 'active' AND expires_at IS NOT NULL AND expiry_notified_at IS NULL;

      ALTER TABLE organizations ADD COLUMN max_key_lifetime_days integer,
        ADD CONSTRAINT ck_organizations_max_key_lifetime_days CHECK (max_key_lifetime_days BETWEEN 1 AND 3650);

      DROP TRIGGER api_keys_standing ON api_keys;
      CREATE TRIGGER api_keys_standing AFTER UPDATE OF status, expires_at ON api_keys
        FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.expires_at IS DISTINCT FROM NEW.expires_at)
        EXECUTE FUNCTION a2a_standing_changed();

      ALTER TABLE events DROP CONSTRAINT ck_events_type;
      ALTER TABLE events ADD CONSTRAINT ck_events_type CHECK (type IN (
        ${EVENT_TYPES_BEFORE}, 'api_key.expiring'));
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DELETE FROM events WHERE type = 'api_key.expiring';
      ALTER TABLE events DROP CONSTRAINT ck_events_type;
      ALTER TABLE events ADD CONSTRAINT ck_events_type CHECK (type IN (
        ${EVENT_TYPES_BEFORE}));

      DROP TRIGGER api_keys_standing ON api_keys;
      CREATE TRIGGER api_keys_standing AFTER UPDATE OF status ON api_keys
        FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION a2a_standing_changed();

      ALTER TABLE organizations DROP CONSTRAINT ck_organizations_max_key_lifetime_days,
        DROP COLUMN max_key_lifetime_days;
      DROP INDEX ix_api_keys_expiry_notice;
      ALTER TABLE api_keys DROP COLUMN expiry_notified_at, DROP COLUMN expires_at;
    `);
  }
}
