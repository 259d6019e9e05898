import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Per-skill policy (docs/api.md §16): a contact rule may name skills (sorted, without
 * repeats; empty: every call), so rules of one owner, direction and peer may differ by
 * their skills and stay unique with them; a task keeps the skill its first message
 * named, a recorded denial the skill of the call it denied; an identity may require
 * every call to name a skill. A worker's tasks of one skill are listed through a
 * partial index: tasks that name no skill do not enter it.
 */
export class PerSkillPolicy1796452504827 implements MigrationInterface {
  name = 'PerSkillPolicy1796452504827';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE contact_rules ADD COLUMN skills text[] NOT NULL DEFAULT '{}',
        ADD CONSTRAINT ck_contact_rules_skills CHECK (cardinality(skills) <= 20 AND array_position(skills, NULL) IS NULL);
      DROP INDEX uq_contact_rules_identity_peer;
      DROP INDEX uq_contact_rules_organization_peer;
      CREATE UNIQUE INDEX uq_contact_rules_identity_peer
        ON contact_rules (identity_id, peer_identity_id, direction, skills) WHERE peer_type = 'identity';
      CREATE UNIQUE INDEX uq_contact_rules_organization_peer
        ON contact_rules (identity_id, peer_organization_id, direction, skills) WHERE peer_type = 'organization';
      ALTER TABLE admission_decisions ADD COLUMN skill varchar(100);
      ALTER TABLE tasks ADD COLUMN skill varchar(100);
      CREATE INDEX ix_tasks_worker_skill ON tasks (worker_identity_id, skill, created_at DESC, id DESC)
        WHERE skill IS NOT NULL;
      ALTER TABLE identities ADD COLUMN require_skill boolean NOT NULL DEFAULT false;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE identities DROP COLUMN require_skill;
      DROP INDEX ix_tasks_worker_skill;
      ALTER TABLE tasks DROP COLUMN skill;
      ALTER TABLE admission_decisions DROP COLUMN skill;
      DROP INDEX uq_contact_rules_identity_peer;
      DROP INDEX uq_contact_rules_organization_peer;
      -- Rules about skills cannot be said without the column (nor kept unique beside the others).
      DELETE FROM contact_rules WHERE skills <> '{}';
      CREATE UNIQUE INDEX uq_contact_rules_identity_peer
        ON contact_rules (identity_id, peer_identity_id, direction) WHERE peer_type = 'identity';
      CREATE UNIQUE INDEX uq_contact_rules_organization_peer
        ON contact_rules (identity_id, peer_organization_id, direction) WHERE peer_type = 'organization';
      ALTER TABLE contact_rules DROP COLUMN skills;
    `);
  }
}
