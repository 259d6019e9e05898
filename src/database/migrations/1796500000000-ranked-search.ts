import type { MigrationInterface, QueryRunner } from 'typeorm';

const PUBLICLY_LISTED = `enabled AND publicly_discoverable AND status = 'active' AND claimed_at IS NOT NULL`;

/**
 * Ranked directory search (docs/api.md §4, "Ranked search").
 *
 * - `search_vector` is rebuilt with the `english` configuration (stems, so `translator`
 *   finds `translation`; stop words left out; handle parts and numbers as the `simple`
 *   dictionary reads them) and four weights: A handle, display name and skill names;
 *   B skill ids and tags; C skill descriptions and examples; D the description.
 * - `search_names` (handle, display name, skill names, lower-cased) carries a trigram
 *   index (pg_trgm, also built into the embedded PGlite) for misspellings and
 *   fragments of handles.
 * - `skill_input_modes` / `skill_output_modes`: the media types the public skills
 *   declare, for the `input_mode` / `output_mode` filters.
 * Public skills only, as before: an `admitted` skill is never searched publicly.
 */
export class RankedSearch1796500000000 implements MigrationInterface {
  name = 'RankedSearch1796500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE EXTENSION IF NOT EXISTS pg_trgm;

      -- The words of one member of every skill, as one text (generated columns' helper).
      CREATE FUNCTION identity_skill_text(skills jsonb, member text) RETURNS text
        LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
        AS $$ SELECT array_to_string(identity_skill_terms(skills, member), ' ') $$;

      DROP INDEX ix_identities_public_search;
      ALTER TABLE identities DROP COLUMN search_vector;
      ALTER TABLE identities
        ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
          setweight(to_tsvector('english'::regconfig, agent_handle || ' ' || display_name || ' ' ||
            identity_skill_text(identity_public_skills(skills), 'name')), 'A') ||
          setweight(to_tsvector('english'::regconfig, identity_skill_text(identity_public_skills(skills), 'id') || ' ' ||
            identity_skill_text(identity_public_skills(skills), 'tags')), 'B') ||
          setweight(to_tsvector('english'::regconfig, identity_skill_text(identity_public_skills(skills), 'description') || ' ' ||
            identity_skill_text(identity_public_skills(skills), 'examples')), 'C') ||
          setweight(to_tsvector('english'::regconfig, description), 'D')) STORED,
        ADD COLUMN search_names text GENERATED ALWAYS AS (
          lower(agent_handle || ' ' || display_name || ' ' || identity_skill_text(identity_public_skills(skills), 'name'))) STORED,
        ADD COLUMN skill_input_modes text[] GENERATED ALWAYS AS (
          identity_skill_terms(identity_public_skills(skills), 'inputModes')) STORED,
        ADD COLUMN skill_output_modes text[] GENERATED ALWAYS AS (
          identity_skill_terms(identity_public_skills(skills), 'outputModes')) STORED;
      CREATE INDEX ix_identities_public_search ON identities USING gin (search_vector)
        WITH (fastupdate = off) WHERE ${PUBLICLY_LISTED};
      CREATE INDEX ix_identities_public_names ON identities USING gin (search_names gin_trgm_ops)
        WITH (fastupdate = off) WHERE ${PUBLICLY_LISTED};
      CREATE INDEX ix_identities_public_input_modes ON identities USING gin (skill_input_modes)
        WITH (fastupdate = off) WHERE ${PUBLICLY_LISTED};
      CREATE INDEX ix_identities_public_output_modes ON identities USING gin (skill_output_modes)
        WITH (fastupdate = off) WHERE ${PUBLICLY_LISTED};
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP INDEX ix_identities_public_output_modes;
      DROP INDEX ix_identities_public_input_modes;
      DROP INDEX ix_identities_public_names;
      DROP INDEX ix_identities_public_search;
      ALTER TABLE identities DROP COLUMN skill_output_modes, DROP COLUMN skill_input_modes,
        DROP COLUMN search_names, DROP COLUMN search_vector;
      ALTER TABLE identities
        ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
          setweight(to_tsvector('simple'::regconfig, agent_handle || ' ' || display_name), 'A') ||
          setweight(to_tsvector('simple'::regconfig, description), 'B') ||
          setweight(jsonb_to_tsvector('simple'::regconfig, identity_public_skills(skills), '["string"]'), 'C')) STORED;
      CREATE INDEX ix_identities_public_search ON identities USING gin (search_vector)
        WITH (fastupdate = off) WHERE ${PUBLICLY_LISTED};
      DROP FUNCTION identity_skill_text(jsonb, text);
    `);
  }
}
