import { Injectable } from '@nestjs/common';
import { isUuid } from '../common/parse-id.pipe';
import { keyset, type KeysetOrder, type PageQuery } from '../common/pagination';
import { Database } from '../database/database';
import { DummyValue, GenerateSql } from '../database/generate-sql';
import { sql, type Sql } from '../database/sql';
import {
  cardFilterConditions,
  IDENTITY_COLUMNS,
  organizationConditions,
  PUBLICLY_LISTED,
  toIdentity,
  type IdentityPage,
  type IdentityRow,
  type OrganizationFilters,
  type PublicFilters,
} from './identities.repository';

/**
 * How relevance is scored (docs/api.md §4, "Ranked search"); measured by
 * bench/relevance.bench.ts (NDCG@10), tuned there, never against the judgments.
 *
 * - WEIGHTS: ts_rank's weights of D (description), C (skill descriptions, examples),
 *   B (skill ids, tags), A (handle, display name, skill names).
 * - NORMALIZATION 1: the rank is divided by 1 + log(length), so a short card that is
 *   all about the words outranks a long one that mentions them.
 * - COVERAGE: added × the share of the query's words the card holds (by IDF): it outweighs
 *   where they are found, so cards holding every word come first.
 * - SIMILARITY: added × word_similarity(q, names) — trigrams, for misspellings and
 *   fragments of handles.
 * - TRIGRAM_THRESHOLD: the least word similarity that makes a card a match by itself.
 */
export const RANKING = {
  weights: '{0.1, 0.25, 0.5, 1.0}',
  normalization: 1,
  relevance: 1,
  coverage: 1,
  similarity: 0.6,
  trigramThreshold: 0.35,
} as const;

/** Search words read from `q`: letters and digits; at most this many (stop words among them). */
const MAX_SEARCH_WORDS = 24;

/**
 * A query of at least this many words is a sentence describing a task: its names' likeness
 * (trigrams) does not score.
 */
const SENTENCE_WORDS = 5;

/** Words of a query that count, stop words aside. */
const MAX_TERMS = 8;

/** Inverse document frequency: a word's matches are counted up to this many (ln(1 + cap / matches)). */
const DF_CAP = 500;

/** A query of at most this many words may match names by their spelling alone. */
const MAX_FUZZY_WORDS = 3;

/**
 * How many matches are scored in full (ts_rank, trigrams): the best by their quick score
 * (quickScore). The others follow them, ranked by that quick score, so a page costs a
 * quick look at every match and at most this many full scores.
 */
const QUICK_CANDIDATES = 200;

/** Scores are kept to this many decimals in the page key. */
const SCORE_SCALE = 1_000_000;

/**
 * Feedback (pseudo-relevance feedback, as RM3 does it): when a query's words find fewer
 * than FEEDBACK_BELOW cards, the words of the skills (ids, tags, descriptions, examples:
 * what an agent does, not its brand) of its FEEDBACK_CARDS best cards that other cards
 * hold too — at most FEEDBACK_TERMS, held by the most of them, rarest first; words of
 * letters only — join the query, each weighing FEEDBACK_WEIGHT of a query word of the
 * same rarity. Cards of one kind written in other words are so found by the words they
 * share (measured: bench/relevance, on both halves of its queries).
 */
const FEEDBACK_CARDS = 2;
const FEEDBACK_TERMS = 10;
const FEEDBACK_WEIGHT = 0.3;
const FEEDBACK_BELOW = 100;

/** A score's place in the page key: above the creation time in microseconds. */
const CREATED_SCALE = '100000000000000000';

/** Added to the key of a card scored in full: above every quick-scored one. */
const TIER = '1000000000000000000000000000000';

/**
 * Ranked order: a numeric key, score first (to 6 decimals), then the creation time in
 * microseconds (newest first among equals), then the id — one key column, so pages
 * go through the one keyset helper.
 */
const RANKED: KeysetOrder = {
  columns: [
    { name: 'rank_key', cast: 'numeric' },
    { name: 'id', cast: 'uuid' },
  ],
  direction: 'DESC',
  valid: (at, id) => typeof at === 'string' && /^\d{1,40}$/.test(at) && isUuid(id),
};

type RankedRow = IdentityRow & { rank_key: string };

const EXAMPLE_PAGE: PageQuery = { limit: 10 };

/**
 * The directories' ranked search: every statement that scores identities against a
 * query `q`. Matching: a card matches when it holds any of the query's words as a word
 * prefix — words stemmed as English, stop words left out; a word that DF_CAP cards or more
 * hold still scores but finds no card by itself; when every word is that common, the
 * cards holding all of them are found. When no card holds a word, a short query (a name,
 * a handle) finds the cards whose names are like it (pg_trgm word similarity:
 * misspellings). A query finding few cards is widened by feedback (FEEDBACK_CARDS).
 * Scoring (RANKING): each word's field-weighted ts_rank and whether the card holds it
 * (coverage: cards holding every word come first), weighted by the word's rarity (IDF),
 * plus the names' likeness to a short query. Cost: every match gets a quick score
 * (tsvector matches only); the QUICK_CANDIDATES best of them are scored in full and
 * ranked first, the rest follow by their quick score — a page costs a bounded number of
 * full scores, but the quick pass and the words' counts still grow with the matches.
 */
@Injectable()
export class RankedSearchRepository {
  constructor(private readonly db: Database) {}

  /** The public directory ranked by relevance to `q`; public skills only (the generated columns hold no others). */
  @GenerateSql({
    params: [{ q: 'invoice reconciliation', tag: DummyValue.STRING, inputMode: 'image/png' }, EXAMPLE_PAGE],
  })
  async listPublic(filters: PublicFilters & { q: string }, pageQuery: PageQuery): Promise<IdentityPage> {
    return rankedPage(this.db, filters.q, [PUBLICLY_LISTED, ...cardFilterConditions(filters)], pageQuery);
  }

  /** One organization's identities ranked by relevance to `q`, whatever their state. */
  @GenerateSql({ params: [DummyValue.UUID, { q: 'billing', enabled: true }, EXAMPLE_PAGE] })
  async listForOrganization(
    organizationId: string,
    filters: OrganizationFilters & { q: string },
    pageQuery: PageQuery,
  ): Promise<IdentityPage> {
    return rankedPage(
      this.db,
      filters.q,
      [sql`i.organization_id = ${organizationId}::uuid`, ...organizationConditions(filters)],
      pageQuery,
    );
  }
}

/** A term's tsquery: the word's English stem as a prefix (a number also as `-N`, as handles hold it), in weight class `cls` ('' any). */
function termQuery(cls: '' | 'A' | 'B' | 'C'): Sql {
  return sql.raw(`(CASE WHEN w ~ '^[0-9]+$' THEN format('%1$L:*${cls} | %2$L:*${cls}', w, '-' || w)
                                ELSE format('%L:*${cls}', lex[1]) END)::tsquery`);
}

/**
 * A card's quick score, without ts_rank or trigrams: for each term, by its IDF, whether the
 * card holds it (COVERAGE) and the weight of the best class of fields that holds it.
 */
function quickScore(terms: number): Sql {
  const [d, c, b, a] = RANKING.weights.slice(1, -1).split(',').map(Number);
  const each = Array.from(
    { length: terms },
    (_, n) => `CASE WHEN i.search_vector @@ search.each_q[${n + 1}] THEN search.idfs[${n + 1}] * (${RANKING.coverage}
                   + CASE WHEN i.search_vector @@ search.a_q[${n + 1}] THEN ${a} WHEN i.search_vector @@ search.b_q[${n + 1}] THEN ${b}
                          WHEN i.search_vector @@ search.c_q[${n + 1}] THEN ${c} ELSE ${d} END) ELSE 0 END`,
  );
  return sql.raw(each.length ? each.join('\n               + ') : '0');
}

/** One page of identities in `scope` ranked by relevance to `q` (RankedSearchRepository). */
async function rankedPage(db: Database, q: string, scope: Sql[], pageQuery: PageQuery): Promise<IdentityPage> {
  const words = searchWords(q);
  const text = words.join(' ');
  const page = keyset('r', pageQuery, RANKED);
  const within = sql.join(scope, ' AND ');
  const sentence = words.length >= SENTENCE_WORDS;
  // Any of the query's finding words (search.match_q): one GIN scan of their union.
  const textMatch = sql`i.search_vector @@ (SELECT match_q FROM search)`;
  // Names like the query: only for a short query (a name, a handle) that no card matches by its words.
  const fuzzy =
    words.length <= MAX_FUZZY_WORDS
      ? sql`UNION ALL
      SELECT i.id, i.created_at, word_similarity(${text}, i.search_names)::float8
        FROM identities i
       WHERE ${within} AND ${text} <% i.search_names
         AND (SELECT coalesce(max(df), 0) FROM query_terms) = 0`
      : sql.empty;
  const rows = await db.transaction(async (tx) => {
    // The trigram operator's threshold (`<%`), for this transaction only.
    await db.execute(
      sql`SELECT set_config('pg_trgm.word_similarity_threshold', ${String(RANKING.trigramThreshold)}, true)`,
      tx,
    );
    return db.rows<RankedRow>(
      sql`
    WITH counted AS MATERIALIZED (
      -- n: the term's place among the kept terms (1…MAX_TERMS); feedback terms come after.
      SELECT row_number() OVER (ORDER BY pos) AS n, t, a_q, b_q, c_q, (SELECT count(*) FROM (SELECT 1 FROM identities i WHERE ${within} AND i.search_vector @@ t
                                                           LIMIT ${DF_CAP}::int) d) AS df
        FROM (SELECT pos, ${termQuery('')} AS t, ${termQuery('A')} AS a_q, ${termQuery('B')} AS b_q, ${termQuery('C')} AS c_q
                FROM unnest(${words}::text[]) WITH ORDINALITY AS u(w, pos), ts_lexize('english_stem', w) AS lex
               WHERE cardinality(lex) > 0 ORDER BY pos LIMIT ${MAX_TERMS}::int) x),
    query_terms AS MATERIALIZED (
      SELECT n, t, a_q, b_q, c_q, df, ln(1 + ${DF_CAP}::float8 / greatest(1, df)) AS idf, df > 0 AND df < ${DF_CAP}::int AS rare
        FROM counted),
    -- Cards are found by any of the rare words (some but fewer than DF_CAP cards hold them); when
    -- there is none, by every word held (common words: the cards holding all of them).
    query AS MATERIALIZED (
      SELECT string_agg('(' || t::text || ')', ' | ')::tsquery AS every_q, greatest(sum(idf), 1e-9) AS idf_sum,
             CASE WHEN bool_or(rare) THEN string_agg('(' || t::text || ')', ' | ') FILTER (WHERE rare)
                  ELSE string_agg('(' || t::text || ')', ' & ') FILTER (WHERE df > 0) END::tsquery AS match_q,
             CASE WHEN bool_or(rare) THEN sum(df) FILTER (WHERE rare) ELSE ${DF_CAP}::int END AS found
        FROM query_terms),
    -- Feedback: the best FEEDBACK_CARDS cards the words find, when they find fewer than FEEDBACK_BELOW.
    seeds AS (
      SELECT i.search_vector FROM identities i CROSS JOIN query
       WHERE ${within} AND i.search_vector @@ (SELECT match_q FROM query)
         AND (SELECT found FROM query) < ${FEEDBACK_BELOW}::int
       ORDER BY ts_rank(${RANKING.weights}::float4[], i.search_vector, query.every_q, ${RANKING.normalization}::int) DESC,
                i.created_at DESC, i.id DESC
       LIMIT ${FEEDBACK_CARDS}::int),
    -- Their skills' other words (letters only, three or more) that other cards hold too, fewer than DF_CAP.
    seed_words AS MATERIALIZED (
      SELECT v.lexeme, count(*) AS seeds
        FROM seeds CROSS JOIN query, unnest(seeds.search_vector) AS v
       WHERE v.lexeme ~ '^[a-z][a-z-]{2,}$' AND v.weights && '{B,C}'::text[]
         AND NOT (array_to_tsvector(ARRAY[v.lexeme]) @@ query.every_q)
       GROUP BY v.lexeme),
    seed_words_counted AS MATERIALIZED (
      SELECT lexeme, seeds, (SELECT count(*) FROM (SELECT 1 FROM identities i WHERE ${within}
                               AND i.search_vector @@ quote_literal(lexeme)::tsquery LIMIT ${DF_CAP}::int) d) AS df
        FROM seed_words),
    feedback AS (SELECT lexeme, seeds, df FROM seed_words_counted WHERE df > 1 AND df < ${DF_CAP}::int),
    -- The query's words, then the FEEDBACK_TERMS feedback words held by most seeds, rarest first, weighing FEEDBACK_WEIGHT.
    terms AS (
      SELECT n, t, a_q, b_q, c_q, idf FROM query_terms
      UNION ALL
      (SELECT ${MAX_TERMS}::int + row_number() OVER (ORDER BY seeds * ln(1 + ${DF_CAP}::float8 / df) DESC, lexeme),
              quote_literal(lexeme)::tsquery, (quote_literal(lexeme) || ':A')::tsquery,
              (quote_literal(lexeme) || ':B')::tsquery, (quote_literal(lexeme) || ':C')::tsquery,
              ${FEEDBACK_WEIGHT}::float8 * ln(1 + ${DF_CAP}::float8 / df)
         FROM feedback ORDER BY 1 LIMIT ${FEEDBACK_TERMS}::int)),
    search AS MATERIALIZED (
      SELECT coalesce(array_agg(t ORDER BY n), '{}') AS each_q, coalesce(array_agg(idf ORDER BY n), '{}') AS idfs,
             coalesce(array_agg(a_q ORDER BY n), '{}') AS a_q, coalesce(array_agg(b_q ORDER BY n), '{}') AS b_q,
             coalesce(array_agg(c_q ORDER BY n), '{}') AS c_q, (SELECT idf_sum FROM query) AS idf_sum,
             -- The query's, or a feedback word.
             CASE WHEN bool_or(n > ${MAX_TERMS}::int)
                  THEN (SELECT match_q FROM query) || string_agg('(' || t::text || ')', ' | ') FILTER (WHERE n > ${MAX_TERMS}::int)::tsquery
                  ELSE (SELECT match_q FROM query) END AS match_q
        FROM terms),
    -- Every match with its quick score; only the QUICK_CANDIDATES best are scored in full.
    matches AS MATERIALIZED (
      SELECT i.id, i.created_at,
             ((${quickScore(Math.min(words.length, MAX_TERMS) + FEEDBACK_TERMS)}) / search.idf_sum)::float8 AS quick
        FROM identities i
       CROSS JOIN search
       WHERE ${within} AND ${textMatch}
      ${fuzzy}),
    bound AS (
      SELECT quick, created_at, id FROM matches ORDER BY quick DESC, created_at DESC, id DESC
      OFFSET ${QUICK_CANDIDATES - 1}::int LIMIT 1)
    SELECT ${IDENTITY_COLUMNS}, s.rank_key::text AS rank_key
      FROM (
        SELECT r.id, r.rank_key FROM (
          SELECT m.id,
                 ${TIER}::numeric
                 + round(${SCORE_SCALE}::numeric * (
                     ${RANKING.relevance}::float8 * f.relevance / search.idf_sum
                     + ${RANKING.coverage}::float8 * f.covered / search.idf_sum
                     + ${RANKING.similarity}::float8 * f.similar * (f.similar >= ${RANKING.trigramThreshold}::float8)::int
                   )::numeric) * ${CREATED_SCALE}::numeric
                 + (extract(epoch FROM m.created_at) * 1000000)::bigint AS rank_key
            FROM matches m
            JOIN identities i USING (id)
           CROSS JOIN search
           CROSS JOIN LATERAL (
             SELECT coalesce(sum(q.idf) FILTER (WHERE i.search_vector @@ q.t), 0) AS covered,
                    coalesce(sum(q.idf * ts_rank(${RANKING.weights}::float4[], i.search_vector, q.t, ${RANKING.normalization}::int)), 0) AS relevance,
                    CASE WHEN ${!sentence}::boolean THEN word_similarity(${text}, i.search_names)::float8 ELSE 0 END AS similar
               FROM unnest(search.each_q, search.idfs) AS q(t, idf)) f
           WHERE NOT EXISTS (SELECT FROM bound) OR (m.quick, m.created_at, m.id) >= (SELECT quick, created_at, id FROM bound)
          UNION ALL
          -- The other matches, after every candidate, by their quick score.
          SELECT m.id,
                 round(${SCORE_SCALE}::numeric * m.quick::numeric) * ${CREATED_SCALE}::numeric
                 + (extract(epoch FROM m.created_at) * 1000000)::bigint
            FROM matches m
           WHERE (m.quick, m.created_at, m.id) < (SELECT quick, created_at, id FROM bound)) r
         WHERE ${page.after} ${page.preparedTail}) s
      JOIN identities i USING (id)
     ORDER BY s.rank_key DESC, s.id DESC`,
      tx,
    );
  });
  const { items, nextCursor } = page.cut(rows, (row) => ({ at: row.rank_key, id: row.id }));
  return { items: items.map(toIdentity), nextCursor };
}

/** The words of `q`, lower-cased letters and digits only (never tsquery syntax), at most MAX_SEARCH_WORDS. */
export function searchWords(q: string): string[] {
  return (q.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).slice(0, MAX_SEARCH_WORDS);
}
