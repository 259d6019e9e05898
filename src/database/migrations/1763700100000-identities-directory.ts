import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Search and listing for the directories. The public directory must stay fast at
 * 100,000 identities, so everything it filters on is a stored generated column
 * with an index limited to publicly listed rows:
 * - `search_vector`: full-text search (`q`) over handle, display name, description
 *   and every string in the skills (names, descriptions, tags, examples). The
 *   `simple` configuration: no stemming, language-neutral, and built into every
 *   PostgreSQL including the embedded one (no extensions such as pg_trgm there).
 * - `skill_keys` / `skill_tags`: lower-cased skill ids and names / tags, for the
 *   `skill` and `tag` filters.
 * - keyset order (created_at DESC, id DESC), as every other list.
 * How a filtered listing chooses between these is in IdentitySearchService.
 * The public predicate in the partial indexes must match the query's WHERE
 * verbatim (IdentitySearchService.PUBLICLY_LISTED) for the planner to use them.
 */
const PUBLICLY_LISTED = `enabled AND publicly_discoverable AND status = 'active' AND claimed_at IS NOT NULL`;

export class IdentitiesDirectory1763700100000 implements MigrationInterface {
  name = 'IdentitiesDirectory1763700100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      -- Only unqualified pg_catalog functions: safe under any search_path, as a
      -- generated column's function must be. IMMUTABLE is true: the result depends
      -- on the argument alone.
      CREATE FUNCTION identity_skill_terms(skills jsonb, member text) RETURNS text[]
        LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
        AS $$
          SELECT coalesce(array_agg(DISTINCT lower(term)), '{}')
            FROM jsonb_array_elements(skills) AS skill,
                 jsonb_array_elements_text(
                   CASE WHEN jsonb_typeof(skill -> member) = 'array' THEN skill -> member
                        ELSE jsonb_build_array(skill -> member) END) AS term
           WHERE term IS NOT NULL
        $$;

      ALTER TABLE identities
        ADD CONSTRAINT ck_identities_skills_array CHECK (jsonb_typeof(skills) = 'array'),
        -- A claim code belongs to an unclaimed identity only; claiming clears it.
        ADD CONSTRAINT ck_identities_claim_code_unclaimed CHECK (claim_code_hash IS NULL OR claimed_at IS NULL),
        ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
          setweight(to_tsvector('simple'::regconfig, agent_handle || ' ' || display_name), 'A') ||
          setweight(to_tsvector('simple'::regconfig, description), 'B') ||
          setweight(jsonb_to_tsvector('simple'::regconfig, skills, '["string"]'), 'C')) STORED,
        ADD COLUMN skill_keys text[] GENERATED ALWAYS AS (
          identity_skill_terms(skills, 'id') || identity_skill_terms(skills, 'name')) STORED,
        ADD COLUMN skill_tags text[] GENERATED ALWAYS AS (identity_skill_terms(skills, 'tags')) STORED;

      CREATE INDEX ix_identities_public_directory ON identities (created_at DESC, id DESC) WHERE ${PUBLICLY_LISTED};
      -- fastupdate off: reads never scan a pending list that only vacuum flushes; the
      -- price, slower identity writes, is small (they are rare next to directory reads).
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
      DROP INDEX ix_identities_public_directory;
      ALTER TABLE identities
        DROP COLUMN skill_tags,
        DROP COLUMN skill_keys,
        DROP COLUMN search_vector,
        DROP CONSTRAINT ck_identities_claim_code_unclaimed,
        DROP CONSTRAINT ck_identities_skills_array;
      DROP FUNCTION identity_skill_terms(jsonb, text);
    `);
  }
}
