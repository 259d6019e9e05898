import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Approvals (docs/api.md §16): a contact rule may `ask` (a new task of the pair waits
 * for a person of the owner's organization), and an identity's filter mode may be
 * `approval` (a peer of another organization with no rule is asked about instead of
 * refused).
 */
export class AskAndApproval1796451758038 implements MigrationInterface {
  name = 'AskAndApproval1796451758038';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE contact_rules DROP CONSTRAINT ck_contact_rules_action,
        ADD CONSTRAINT ck_contact_rules_action CHECK (action IN ('allow', 'block', 'ask'));
      ALTER TABLE identities DROP CONSTRAINT ck_identities_filter_mode,
        ADD CONSTRAINT ck_identities_filter_mode CHECK (filter_mode IN ('whitelist', 'blacklist', 'approval'));
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE contact_rules DROP CONSTRAINT ck_contact_rules_action,
        ADD CONSTRAINT ck_contact_rules_action CHECK (action IN ('allow', 'block'));
      ALTER TABLE identities DROP CONSTRAINT ck_identities_filter_mode,
        ADD CONSTRAINT ck_identities_filter_mode CHECK (filter_mode IN ('whitelist', 'blacklist'));
    `);
  }
}
