import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * docs/api.md §10: at most LEDGER_MAX_ARTIFACT_BYTES_PER_TASK of artifact content per
 * task, appends included. Each artifact keeps the size of its parts (their JSON, in
 * UTF-8 bytes), maintained by every write under the task's row lock, so the check
 * sums a few integers instead of measuring every part. Existing rows are measured
 * once here.
 */
export class ArtifactBytes1763700500000 implements MigrationInterface {
  name = 'ArtifactBytes1763700500000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE artifacts ADD COLUMN content_bytes integer NOT NULL DEFAULT 0`);
    await q.query(`UPDATE artifacts SET content_bytes = octet_length(parts::text)`);
    await q.query(`ALTER TABLE artifacts ADD CONSTRAINT ck_artifacts_content_bytes CHECK (content_bytes >= 0)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE artifacts DROP COLUMN content_bytes`);
  }
}
