import type { MigrationInterface, QueryRunner } from 'typeorm';

const LISTED = (row: 'NEW' | 'OLD' | 'i') =>
  `${row}.enabled AND ${row}.publicly_discoverable AND ${row}.status = 'active' AND ${row}.claimed_at IS NOT NULL`;

/**
 * The public directory's word index (docs/api.md §4, "Ranked search", "How a search is
 * read"): one row per word (lexeme of `search_vector`) of every publicly listed card, with
 * the weightiest class of fields holding it (4 A names … 1 D description) and the card's
 * creation time — what a word's count, its exact words (a prefix's lexemes) and a walk of
 * its cards in rank order (weight, then newest) need, read from an index alone, never from
 * the cards. The GIN index on `search_vector` still finds the cards of several words.
 *
 * Kept by triggers, so no write path can forget it: a card listed, unlisted, deleted or
 * with other words; a TRUNCATE of identities empties it.
 */
export class IdentitySearchTerms1796520000000 implements MigrationInterface {
  name = 'IdentitySearchTerms1796520000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE identity_search_terms (
        identity_id uuid NOT NULL,
        lexeme text COLLATE "C" NOT NULL,
        weight smallint NOT NULL CHECK (weight BETWEEN 1 AND 4),
        created_at timestamptz NOT NULL,
        PRIMARY KEY (identity_id, lexeme)
      );
      CREATE INDEX ix_identity_search_terms_walk
        ON identity_search_terms (lexeme, weight DESC, created_at DESC, identity_id DESC);

      -- A card's words, each with the weightiest class holding it.
      CREATE FUNCTION identity_search_terms_of(search tsvector) RETURNS TABLE (lexeme text, weight smallint)
        LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
          SELECT v.lexeme, (CASE WHEN 'A' = ANY (v.weights) THEN 4 WHEN 'B' = ANY (v.weights) THEN 3
                                 WHEN 'C' = ANY (v.weights) THEN 2 ELSE 1 END)::smallint
            FROM unnest(search) AS v $$;

      CREATE FUNCTION identity_search_terms_sync() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP <> 'INSERT' THEN
          DELETE FROM identity_search_terms WHERE identity_id = OLD.id;
        END IF;
        IF TG_OP <> 'DELETE' AND ${LISTED('NEW')} THEN
          INSERT INTO identity_search_terms (identity_id, lexeme, weight, created_at)
            SELECT NEW.id, t.lexeme, t.weight, NEW.created_at FROM identity_search_terms_of(NEW.search_vector) t;
        END IF;
        RETURN NULL;
      END $$;
      CREATE FUNCTION identity_search_terms_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        TRUNCATE identity_search_terms;
        RETURN NULL;
      END $$;

      CREATE TRIGGER identities_search_terms_inserted AFTER INSERT ON identities
        FOR EACH ROW WHEN (${LISTED('NEW')}) EXECUTE FUNCTION identity_search_terms_sync();
      CREATE TRIGGER identities_search_terms_updated AFTER UPDATE ON identities
        FOR EACH ROW WHEN ((${LISTED('OLD')}) IS DISTINCT FROM (${LISTED('NEW')})
                           OR ((${LISTED('NEW')}) AND (OLD.search_vector IS DISTINCT FROM NEW.search_vector
                                                       OR OLD.created_at IS DISTINCT FROM NEW.created_at
                                                       OR OLD.id IS DISTINCT FROM NEW.id)))
        EXECUTE FUNCTION identity_search_terms_sync();
      CREATE TRIGGER identities_search_terms_deleted AFTER DELETE ON identities
        FOR EACH ROW WHEN (${LISTED('OLD')}) EXECUTE FUNCTION identity_search_terms_sync();
      CREATE TRIGGER identities_search_terms_truncated AFTER TRUNCATE ON identities
        FOR EACH STATEMENT EXECUTE FUNCTION identity_search_terms_truncate();

      INSERT INTO identity_search_terms (identity_id, lexeme, weight, created_at)
        SELECT i.id, t.lexeme, t.weight, i.created_at
          FROM identities i CROSS JOIN LATERAL identity_search_terms_of(i.search_vector) t
         WHERE ${LISTED('i')};
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TRIGGER identities_search_terms_truncated ON identities;
      DROP TRIGGER identities_search_terms_deleted ON identities;
      DROP TRIGGER identities_search_terms_updated ON identities;
      DROP TRIGGER identities_search_terms_inserted ON identities;
      DROP FUNCTION identity_search_terms_truncate();
      DROP FUNCTION identity_search_terms_sync();
      DROP FUNCTION identity_search_terms_of(tsvector);
      DROP TABLE identity_search_terms;
    `);
  }
}
