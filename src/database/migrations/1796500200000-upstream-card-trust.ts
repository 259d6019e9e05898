import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Verified upstream cards (docs/api.md §14, "Verified upstream cards"): the keys an
 * organization pins for an upstream (a JWK Set, or the URL of one — never both), the
 * result of the last verification of its card, and the organization setting that
 * forwards only to upstreams whose card verified.
 */
export class UpstreamCardTrust1796500200000 implements MigrationInterface {
  name = 'UpstreamCardTrust1796500200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE identity_upstreams
        ADD COLUMN trusted_jwks jsonb,
        ADD COLUMN trusted_jwks_uri varchar(2048),
        ADD COLUMN card_verification varchar(10),
        ADD COLUMN card_verified_kid varchar(200),
        ADD COLUMN card_verification_error varchar(500),
        ADD COLUMN card_checked_at timestamptz,
        ADD CONSTRAINT ck_identity_upstreams_trusted_keys CHECK (trusted_jwks IS NULL OR trusted_jwks_uri IS NULL),
        ADD CONSTRAINT ck_identity_upstreams_card_verification
          CHECK (card_verification IN ('verified', 'unsigned', 'failed')),
        ADD CONSTRAINT ck_identity_upstreams_verified_kid
          CHECK ((card_verification = 'verified') = (card_verified_kid IS NOT NULL));
      ALTER TABLE organizations ADD COLUMN require_verified_upstream_cards boolean NOT NULL DEFAULT false;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE organizations DROP COLUMN require_verified_upstream_cards;
      ALTER TABLE identity_upstreams
        DROP COLUMN card_checked_at, DROP COLUMN card_verification_error, DROP COLUMN card_verified_kid,
        DROP COLUMN card_verification, DROP COLUMN trusted_jwks_uri, DROP COLUMN trusted_jwks;
    `);
  }
}
