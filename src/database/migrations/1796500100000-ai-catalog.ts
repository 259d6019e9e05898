import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The AI Catalog's Last-Modified (docs/api.md §4, "AI Catalog"): the latest change of
 * any identity — one read off this index, whatever the table's size.
 */
export class AiCatalog1796500100000 implements MigrationInterface {
  name = 'AiCatalog1796500100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX ix_identities_updated_at ON identities (updated_at DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX ix_identities_updated_at`);
  }
}
