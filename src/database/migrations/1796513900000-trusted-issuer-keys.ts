import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A trusted issuer's keys given inline (docs/api.md §17): a JWK Set of public keys, for
 * an issuer that publishes none at an address the service may fetch (a CI system with
 * static keys). Either those keys or `jwks_uri`, never both.
 */
export class TrustedIssuerKeys1796513900000 implements MigrationInterface {
  name = 'TrustedIssuerKeys1796513900000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE trusted_issuers
        ADD COLUMN jwks jsonb,
        ADD CONSTRAINT ck_trusted_issuers_keys CHECK (jwks IS NULL OR jwks_uri IS NULL);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE trusted_issuers DROP CONSTRAINT ck_trusted_issuers_keys, DROP COLUMN jwks;`);
  }
}
