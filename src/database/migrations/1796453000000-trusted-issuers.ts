import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Trusted issuers (docs/api.md §17): an organization trusts another issuer's JWTs for
 * an audience, each mapped subject acting as one of its identities. One issuer and
 * audience belong to one organization (a token names exactly one trust); `subjects`
 * maps a subject to an identity's handle (handles are never reused).
 */
export class TrustedIssuers1796453000000 implements MigrationInterface {
  name = 'TrustedIssuers1796453000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE trusted_issuers (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        issuer text NOT NULL,
        jwks_uri text,
        audience text NOT NULL,
        subject_claim text NOT NULL DEFAULT 'sub',
        subjects jsonb NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT ck_trusted_issuers_subjects CHECK (jsonb_typeof(subjects) = 'object')
      );
      CREATE UNIQUE INDEX uq_trusted_issuers_issuer_audience ON trusted_issuers (issuer, audience);
      CREATE INDEX ix_trusted_issuers_organization ON trusted_issuers (organization_id, created_at DESC, id DESC);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE trusted_issuers`);
  }
}
