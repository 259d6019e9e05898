import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Availability in the directory (docs/api.md §4, "Availability"): an upstream's failed
 * forward attempts in a row (reset by one that succeeds). A worker's unanswered tasks
 * are read through the existing ix_tasks_worker_state.
 */
export class Availability1796500300000 implements MigrationInterface {
  name = 'Availability1796500300000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE identity_upstreams ADD COLUMN failed_forwards integer NOT NULL DEFAULT 0 CHECK (failed_forwards >= 0)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE identity_upstreams DROP COLUMN failed_forwards`);
  }
}
