import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Admission's version (issue 13): one row, replaced by every committed change to what a
 * protocol call's admission reads — any identity, any contact rule. A call's parties
 * and rules, read with the version they were read at, still hold for a later call of
 * the same pair whose key lookup reads the same version (AdmissionService.admitCall),
 * so that call needs no read of its own.
 *
 * Set by triggers, so no write path can forget it (an operator's hand-written UPDATE
 * included; not one made with triggers disabled), in the transaction of the change: a
 * statement sees the change and the new version together, or neither. A random value,
 * not a count, so that a database whose history forks — a restore, a failover to a
 * standby that lagged — never shows a version an instance kept a pair at from the lost
 * history. Deferred to the commit and once a transaction (however many rows it changed):
 * the version's row is the last lock a transaction takes, so two changes cannot wait on
 * each other through it (a statement-level trigger would take it after the statement,
 * holding other rows), and a bulk change writes it once. A TRUNCATE, which has no rows,
 * sets it at once.
 */
export class AdmissionVersion1795700000000 implements MigrationInterface {
  name = 'AdmissionVersion1795700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE admission_version (
        singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
        version uuid NOT NULL DEFAULT gen_random_uuid()
      );
      INSERT INTO admission_version DEFAULT VALUES;
      CREATE FUNCTION a2a_admission_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        -- Once a transaction: the setting is the transaction's own (set_config's third argument).
        IF current_setting('a2a.admission_changed', true) IS DISTINCT FROM txid_current()::text THEN
          PERFORM set_config('a2a.admission_changed', txid_current()::text, true);
          UPDATE admission_version SET version = gen_random_uuid();
        END IF;
        RETURN NULL;
      END $$;
      CREATE CONSTRAINT TRIGGER identities_admission_version AFTER UPDATE OR DELETE ON identities
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION a2a_admission_changed();
      CREATE CONSTRAINT TRIGGER contact_rules_admission_version AFTER INSERT OR UPDATE OR DELETE ON contact_rules
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION a2a_admission_changed();
      CREATE TRIGGER identities_admission_version_truncated AFTER TRUNCATE ON identities
        FOR EACH STATEMENT EXECUTE FUNCTION a2a_admission_changed();
      CREATE TRIGGER contact_rules_admission_version_truncated AFTER TRUNCATE ON contact_rules
        FOR EACH STATEMENT EXECUTE FUNCTION a2a_admission_changed();
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TRIGGER contact_rules_admission_version_truncated ON contact_rules;
      DROP TRIGGER identities_admission_version_truncated ON identities;
      DROP TRIGGER contact_rules_admission_version ON contact_rules;
      DROP TRIGGER identities_admission_version ON identities;
      DROP FUNCTION a2a_admission_changed();
      DROP TABLE admission_version;
    `);
  }
}
