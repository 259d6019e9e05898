import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The names' lexicon (docs/api.md §4, "How a search is read"): every word of the cards'
 * names (`search_names`: handle, display name, public skills' names, as the text search
 * parser splits them, so `billing.io` is one word) with its lexeme in `search_vector`, and a
 * trigram index on the word. A misspelt or partial name is looked up here — among words,
 * not among every card's names — and its cards are then found by the lexemes of the words
 * spelled like it (the word index for the public directory, `search_vector` otherwise).
 *
 * Kept by triggers, in the card's own transaction: a card's new words are added (in word
 * order, so two writers never wait on each other in a cycle); a word no card holds any
 * longer stays, finding nothing. A TRUNCATE of identities empties it.
 *
 * The trigram index on every card's names (ix_identities_public_names), which a misspelling
 * had to recheck thousands of names through, is no longer read: it goes.
 */
export class IdentityNameWords1796530000000 implements MigrationInterface {
  name = 'IdentityNameWords1796530000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP INDEX ix_identities_public_names;
      CREATE TABLE identity_name_words (
        word text COLLATE "C" NOT NULL,
        lexeme text COLLATE "C" NOT NULL,
        PRIMARY KEY (word, lexeme)
      );
      CREATE INDEX ix_identity_name_words_trigrams ON identity_name_words USING gin (word gin_trgm_ops);

      -- The words of a card's names as search_vector's parser reads them (a host, a dotted or
      -- hyphenated word whole, and its parts), each with its lexemes (none for a stop word).
      CREATE FUNCTION identity_name_words_of(names text) RETURNS TABLE (word text, lexeme text)
        LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
          SELECT DISTINCT d.token, l FROM ts_debug('english'::regconfig, names) AS d, unnest(d.lexemes) AS l $$;

      CREATE FUNCTION identity_name_words_sync() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO identity_name_words (word, lexeme)
          SELECT n.word, n.lexeme FROM identity_name_words_of(NEW.search_names) n
           ORDER BY n.word, n.lexeme
          ON CONFLICT DO NOTHING;
        RETURN NULL;
      END $$;
      CREATE FUNCTION identity_name_words_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        TRUNCATE identity_name_words;
        RETURN NULL;
      END $$;

      CREATE TRIGGER identities_name_words_inserted AFTER INSERT ON identities
        FOR EACH ROW EXECUTE FUNCTION identity_name_words_sync();
      CREATE TRIGGER identities_name_words_updated AFTER UPDATE ON identities
        FOR EACH ROW WHEN (OLD.search_names IS DISTINCT FROM NEW.search_names)
        EXECUTE FUNCTION identity_name_words_sync();
      CREATE TRIGGER identities_name_words_truncated AFTER TRUNCATE ON identities
        FOR EACH STATEMENT EXECUTE FUNCTION identity_name_words_truncate();

      INSERT INTO identity_name_words (word, lexeme)
        SELECT DISTINCT n.word, n.lexeme FROM identities i CROSS JOIN LATERAL identity_name_words_of(i.search_names) n;
      -- Its statistics now, not at autovacuum's next pass: unknown, a trigram lookup is planned as a scan of every word.
      ANALYZE identity_name_words;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TRIGGER identities_name_words_truncated ON identities;
      DROP TRIGGER identities_name_words_updated ON identities;
      DROP TRIGGER identities_name_words_inserted ON identities;
      DROP FUNCTION identity_name_words_truncate();
      DROP FUNCTION identity_name_words_sync();
      DROP FUNCTION identity_name_words_of(text);
      DROP TABLE identity_name_words;
      CREATE INDEX ix_identities_public_names ON identities USING gin (search_names gin_trgm_ops)
        WITH (fastupdate = off) WHERE enabled AND publicly_discoverable AND status = 'active' AND claimed_at IS NOT NULL;
    `);
  }
}
