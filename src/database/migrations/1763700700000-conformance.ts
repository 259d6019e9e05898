import type { MigrationInterface, QueryRunner } from 'typeorm';

const PUBLICLY_LISTED = `enabled AND publicly_discoverable AND status = 'active' AND claimed_at IS NOT NULL`;

/**
 * Signed Agent Cards and skills of visibility `admitted` (docs/api.md §3, §4).
 *
 * - `card_signing_keys`: the keys that sign served cards. One `current` (signs), at
 *   most one `previous` (still listed in the JWKS, so verifiers holding a card signed
 *   before a rotation can check it), older ones `retired`. A generated key keeps its
 *   private half here (the development convenience); a key from
 *   CARD_SIGNING_KEY_FILE is recorded by its public half only.
 * - The directory's search columns are rebuilt over the public skills only, so an
 *   admitted skill is neither shown by nor searchable through the public directory.
 *   `visibility` itself is left out of the indexed text.
 */
export class Conformance1763700700000 implements MigrationInterface {
  name = 'Conformance1763700700000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE card_signing_keys (
        kid text PRIMARY KEY,
        algorithm text NOT NULL CHECK (algorithm IN ('ES256', 'EdDSA')),
        public_jwk jsonb NOT NULL,
        private_key_pem text,
        source text NOT NULL CHECK (source IN ('generated', 'file')),
        status text NOT NULL CHECK (status IN ('current', 'previous', 'retired')),
        created_at timestamptz NOT NULL DEFAULT now(),
        retired_at timestamptz,
        CHECK (source = 'file' OR private_key_pem IS NOT NULL)
      );
      CREATE UNIQUE INDEX ux_card_signing_keys_current ON card_signing_keys ((status)) WHERE status IN ('current', 'previous');

      CREATE FUNCTION identity_public_skills(skills jsonb) RETURNS jsonb
        LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
        AS $$
          SELECT coalesce(jsonb_agg(skill - 'visibility'), '[]'::jsonb)
            FROM jsonb_array_elements(skills) AS skill
           WHERE skill ->> 'visibility' IS DISTINCT FROM 'admitted'
        $$;

      DROP INDEX ix_identities_public_skill_tags;
      DROP INDEX ix_identities_public_skill_keys;
      DROP INDEX ix_identities_public_search;
      ALTER TABLE identities DROP COLUMN skill_tags, DROP COLUMN skill_keys, DROP COLUMN search_vector;
      ALTER TABLE identities
        ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
          setweight(to_tsvector('simple'::regconfig, agent_handle || ' ' || display_name), 'A') ||
          setweight(to_tsvector('simple'::regconfig, description), 'B') ||
          setweight(jsonb_to_tsvector('simple'::regconfig, identity_public_skills(skills), '["string"]'), 'C')) STORED,
        ADD COLUMN skill_keys text[] GENERATED ALWAYS AS (
          identity_skill_terms(identity_public_skills(skills), 'id') || identity_skill_terms(identity_public_skills(skills), 'name')) STORED,
        ADD COLUMN skill_tags text[] GENERATED ALWAYS AS (identity_skill_terms(identity_public_skills(skills), 'tags')) STORED;
      CREATE INDEX ix_identities_public_search ON identities USING gin (search_vector)
        WITH (fastupdate = off) WHERE ${PUBLICLY_LISTED};
      CREATE INDEX ix_identities_public_skill_keys ON identities USING gin (skill_keys)
        WITH (fastupdate = off) WHERE ${PUBLICLY_LISTED};
      CREATE INDEX ix_identities_public_skill_tags ON identities USING gin (skill_tags)
        WITH (fastupdate = off) WHERE ${PUBLICLY_LISTED};
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP INDEX ix_identities_public_skill_tags;
      DROP INDEX ix_identities_public_skill_keys;
      DROP INDEX ix_identities_public_search;
      ALTER TABLE identities DROP COLUMN skill_tags, DROP COLUMN skill_keys, DROP COLUMN search_vector;
      ALTER TABLE identities
        ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
          setweight(to_tsvector('simple'::regconfig, agent_handle || ' ' || display_name), 'A') ||
          setweight(to_tsvector('simple'::regconfig, description), 'B') ||
          setweight(jsonb_to_tsvector('simple'::regconfig, skills, '["string"]'), 'C')) STORED,
        ADD COLUMN skill_keys text[] GENERATED ALWAYS AS (
          identity_skill_terms(skills, 'id') || identity_skill_terms(skills, 'name')) STORED,
        ADD COLUMN skill_tags text[] GENERATED ALWAYS AS (identity_skill_terms(skills, 'tags')) STORED;
      CREATE INDEX ix_identities_public_search ON identities USING gin (search_vector)
        WITH (fastupdate = off) WHERE ${PUBLICLY_LISTED};
      CREATE INDEX ix_identities_public_skill_keys ON identities USING gin (skill_keys)
        WITH (fastupdate = off) WHERE ${PUBLICLY_LISTED};
      CREATE INDEX ix_identities_public_skill_tags ON identities USING gin (skill_tags)
        WITH (fastupdate = off) WHERE ${PUBLICLY_LISTED};
      DROP FUNCTION identity_public_skills(jsonb);
      DROP TABLE card_signing_keys;
    `);
  }
}
