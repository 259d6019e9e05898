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
 * - COVERAGE: added × the share of the query's words the card matches.
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
 * A query of at least this many words is a sentence describing a task: a card matching
 * any of its words (stop words aside) is a match, ranked by how many it holds and how
 * rare they are. A shorter query matches cards holding every one of its words.
 */
const SENTENCE_WORDS = 5;

/** Words of a query that count, stop words aside. */
const MAX_TERMS = 8;

/** Inverse document frequency: a word's matches are counted up to this many (ln(1 + cap / matches)). */
const DF_CAP = 500;

/** A query of at most this many words may match names by their spelling alone. */
const MAX_FUZZY_WORDS = 3;

/** Scores are kept to this many decimals in the page key. */
const SCORE_SCALE = 1_000_000;

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
 * query `q`. Matching: a card matches when it holds every word of the query as a word
 * prefix — words stemmed as English, stop words left out — or, for a query of
 * SENTENCE_WORDS words or more (a task described in a sentence), any of them. When no
 * card matches so, a short query (a name, a handle) finds the cards whose names are like
 * it (pg_trgm word similarity: misspellings). Scoring (RANKING): each word's field-weighted
 * ts_rank and whether the card holds it, weighted by the word's rarity (IDF), plus the
 * names' likeness to a short query. Cost: every match is scored, so a page costs about
 * the number of matches (BENCHMARKS.md, the directory bench).
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

/** One page of identities in `scope` ranked by relevance to `q` (RankedSearchRepository). */
async function rankedPage(db: Database, q: string, scope: Sql[], pageQuery: PageQuery): Promise<IdentityPage> {
  const words = searchWords(q);
  const text = words.join(' ');
  const page = keyset('m', pageQuery, RANKED);
  const within = sql.join(scope, ' AND ');
  const sentence = words.length >= SENTENCE_WORDS;
  // Every word (one GIN scan of their intersection), or — a sentence — any of them.
  const textMatch = sql`i.search_vector @@ (SELECT match_q FROM search)`;
  // Names like the query: only for a short query (a name, a handle) that no card matches by its words.
  const fuzzy =
    words.length <= MAX_FUZZY_WORDS
      ? sql`OR (${text} <% i.search_names AND NOT EXISTS (
              SELECT 1 FROM identities i CROSS JOIN search WHERE ${within} AND ${textMatch}))`
      : sql.empty;
  const rows = await db.transaction(async (tx) => {
    // The trigram operator's threshold (`<%`), for this transaction only.
    await db.execute(
      sql`SELECT set_config('pg_trgm.word_similarity_threshold', ${String(RANKING.trigramThreshold)}, true)`,
      tx,
    );
    return db.rows<RankedRow>(
      sql`
    WITH terms AS MATERIALIZED (
      SELECT n, t, CASE WHEN df IS NULL THEN 1 ELSE ln(1 + ${DF_CAP}::float8 / greatest(1, df)) END AS idf,
             coalesce(df >= ${DF_CAP}::int, false) AS common
        FROM (
      SELECT n, t, CASE WHEN ${words.length > 1}::boolean THEN (
               SELECT count(*) FROM (SELECT 1 FROM identities i WHERE ${within} AND i.search_vector @@ t
                                      LIMIT ${DF_CAP}::int) d) END AS df
        FROM (SELECT n, (CASE WHEN w ~ '^[0-9]+$' THEN format('%L:* | %L:*', w, '-' || w)
                              ELSE format('%L:*', lex[1]) END)::tsquery AS t
                FROM unnest(${words}::text[]) WITH ORDINALITY AS u(w, n), ts_lexize('english_stem', w) AS lex
               WHERE cardinality(lex) > 0 ORDER BY n LIMIT ${MAX_TERMS}::int) x) y),
    search AS MATERIALIZED (
      SELECT coalesce(array_agg(t ORDER BY n), '{}') AS each_q, coalesce(array_agg(idf ORDER BY n), '{}') AS idfs,
             count(*) AS n, greatest(sum(idf), 1e-9) AS idf_sum,
             -- A sentence matches by its rarer words: one that reaches DF_CAP matches finds too much to
             -- tell cards apart (it still scores); when every word is that common, by all of them.
             coalesce(string_agg('(' || t::text || ')', ' | ') FILTER (WHERE NOT common AND ${sentence}::boolean),
                      string_agg('(' || t::text || ')', ${sentence ? ' | ' : ' & '}))::tsquery AS match_q
        FROM terms)
    SELECT ${IDENTITY_COLUMNS}, s.rank_key::text AS rank_key
      FROM (
        SELECT m.id, m.rank_key FROM (
          SELECT i.id,
                 round(${SCORE_SCALE}::numeric * (
                   ${RANKING.relevance}::float8 * f.relevance / search.idf_sum
                   + ${RANKING.coverage}::float8 * f.covered / search.idf_sum
                   + ${RANKING.similarity}::float8 * f.similar * (f.similar >= ${RANKING.trigramThreshold}::float8)::int
                 )::numeric) * 100000000000000000
                 + (extract(epoch FROM i.created_at) * 1000000)::bigint AS rank_key
            FROM identities i
           CROSS JOIN search
           CROSS JOIN LATERAL (
             SELECT coalesce(sum(q.idf) FILTER (WHERE i.search_vector @@ q.t), 0) AS covered,
                    coalesce(sum(q.idf * ts_rank(${RANKING.weights}::float4[], i.search_vector, q.t, ${RANKING.normalization}::int)), 0) AS relevance,
                    CASE WHEN ${!sentence}::boolean THEN word_similarity(${text}, i.search_names)::float8 ELSE 0 END AS similar
               FROM unnest(search.each_q, search.idfs) AS q(t, idf)) f
           WHERE ${within}
             AND (${textMatch} ${fuzzy})) m
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
