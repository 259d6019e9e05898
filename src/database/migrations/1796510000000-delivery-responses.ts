import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What the endpoint answered, kept with each delivery attempt (docs/api.md §8): its
 * response headers (at most 20, each value cut to 200 characters, never a cookie or a
 * credential header) and the first 1,024 bytes of its body. Both null when nothing
 * answered (a timeout, a refused connection) and for attempts made before this.
 */
export class DeliveryResponses1796510000000 implements MigrationInterface {
  name = 'DeliveryResponses1796510000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE delivery_attempts ADD COLUMN response_headers jsonb, ADD COLUMN response_body varchar(1024);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE delivery_attempts DROP COLUMN response_headers, DROP COLUMN response_body;`);
  }
}
