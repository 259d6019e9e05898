import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Open calls' standing (issue 13): every change that can cost a call its standing is
 * announced on the task-change channel as `standing:0` when it commits — a key's
 * status, any change to an identity, any change to a contact rule, a TRUNCATE of any
 * of the three. Triggers, so that no write path can forget it (an operator's
 * hand-written UPDATE included; not one made with triggers disabled). An
 * instance counts them (TaskNotifier.standingChangedAt) and an open call's wake-up
 * that the channel announced, with nothing counted since the call's standing was last
 * read, needs no second read (CallStanding). Statement-level where any row counts; a
 * key's row only when its status moves (its last use is written all the time). In one
 * transaction the same notification is sent once.
 */
export class StandingChanges1795600000000 implements MigrationInterface {
  name = 'StandingChanges1795600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION a2a_standing_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('a2a_task_changes', 'standing:0');
        RETURN NULL;
      END $$;
      CREATE TRIGGER api_keys_standing AFTER UPDATE OF status ON api_keys
        FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION a2a_standing_changed();
      CREATE TRIGGER api_keys_standing_deleted AFTER DELETE OR TRUNCATE ON api_keys
        FOR EACH STATEMENT EXECUTE FUNCTION a2a_standing_changed();
      CREATE TRIGGER identities_standing AFTER UPDATE OR DELETE OR TRUNCATE ON identities
        FOR EACH STATEMENT EXECUTE FUNCTION a2a_standing_changed();
      CREATE TRIGGER contact_rules_standing AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON contact_rules
        FOR EACH STATEMENT EXECUTE FUNCTION a2a_standing_changed();
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TRIGGER contact_rules_standing ON contact_rules;
      DROP TRIGGER identities_standing ON identities;
      DROP TRIGGER api_keys_standing_deleted ON api_keys;
      DROP TRIGGER api_keys_standing ON api_keys;
      DROP FUNCTION a2a_standing_changed();
    `);
  }
}
