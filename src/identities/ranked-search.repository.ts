import { Injectable } from '@nestjs/common';
import { isUuid } from '../common/parse-id.pipe';
import { keyset, type Keyset, type KeysetOrder, type PageQuery } from '../common/pagination';
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
  trigramThreshold: 0.3,
} as const;

/** Search words read from `q`: letters and digits; at most this many (stop words among them). */
const MAX_SEARCH_WORDS = 24;

/**
 * A query of at least this many words is a sentence describing a task: its names' likeness
 * (trigrams) does not score.
 */
const SENTENCE_WORDS = 5;

/** A query written as a handle: words joined by a hyphen. */
const HANDLE_LIKE = /[\p{L}\p{N}]-[\p{L}\p{N}]/u;

/** A word that is a number (handles number their agents). */
const NUMBER = /^\p{N}+$/u;

/**
 * Whether the names' likeness to the query (SIMILARITY: trigrams, the spelling) scores.
 * It is for a query naming an agent: one word besides stop words (a fragment of a name), a
 * word no card holds (a misspelling), a handle (words joined by hyphens, or a number:
 * `acme-invoicer-2` above `acme-invoicer-21`). Not for a sentence, nor for several words
 * each held by some card: those rank by where the cards hold them, and the order of a
 * name's words is noise there (bench/relevance: skill queries 0.824 → 0.839, both halves
 * of the queries better; and a two-word page ~2 ms less, its 200 candidates' likeness not
 * computed). `asked`: the query's terms (not feedback's).
 */
function likenessScores(q: string, words: string[], asked: TermRow[]): boolean {
  const naming =
    asked.length <= 1 ||
    asked.some((term) => term.df === 0) ||
    HANDLE_LIKE.test(q) ||
    words.some((word) => NUMBER.test(word));
  return words.length < SENTENCE_WORDS && naming;
}

/** Words of a query that count, stop words aside. */
const MAX_TERMS = 8;

/** Inverse document frequency: a word's matches are counted up to this many (ln(1 + cap / matches)). */
const DF_CAP = 500;

/** A query of at most this many words may match names by their spelling alone. */
const MAX_FUZZY_WORDS = 3;

/**
 * How many matches are scored in full (ts_rank, trigrams): the best by their quick score
 * (quickScore). The others follow them, ranked by that quick score and read only when a
 * page reaches them, so a page costs at most this many full scores.
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
 * a handle) finds the cards whose names hold a word spelled like one of its words (pg_trgm
 * word similarity: misspellings). A query finding few cards is widened by feedback
 * (FEEDBACK_CARDS).
 * Scoring (RANKING): each word's field-weighted ts_rank and whether the card holds it
 * (coverage: cards holding every word come first), weighted by the word's rarity (IDF),
 * plus the names' likeness to a query naming an agent (likenessScores). The QUICK_CANDIDATES
 * best by a quick score (tsvector matches only) are scored in full and ranked first; the
 * rest follow by their quick score, read only when a page reaches them.
 *
 * Cost (docs/api.md §4, "How a search is read"): two statements, its terms then its page
 * (three for a misspelling: the names' words spelled like it come between). In the public
 * directory, the word index (identity_search_terms) gives each word's count and a prefix's
 * exact words from an index alone; the GIN index finds the cards of several exact words; a
 * one-word search whose word is common, and a misspelling, read their candidates from the
 * word index in rank order (walkedCandidates) instead of scoring every match; the names'
 * lexicon (identity_name_words) finds the words a misspelling stands for. An organization's
 * directory, not in the word index, counts and scores its own matching rows.
 */
@Injectable()
export class RankedSearchRepository {
  constructor(private readonly db: Database) {}

  /** The public directory ranked by relevance to `q`; public skills only (the generated columns hold no others). */
  @GenerateSql({
    params: [{ q: 'invoice reconciliation', tag: DummyValue.STRING, inputMode: 'image/png' }, EXAMPLE_PAGE],
  })
  async listPublic(filters: PublicFilters & { q: string }, pageQuery: PageQuery): Promise<IdentityPage> {
    const conditions = cardFilterConditions(filters).filter((condition) => !condition.isEmpty);
    const within = sql.join([PUBLICLY_LISTED, ...conditions], ' AND ');
    return rankedPage(this.db, filters.q, { within, indexed: true, filtered: conditions.length > 0 }, pageQuery);
  }

  /** One organization's identities ranked by relevance to `q`, whatever their state. */
  @GenerateSql({ params: [DummyValue.UUID, { q: 'billing', enabled: true }, EXAMPLE_PAGE] })
  async listForOrganization(
    organizationId: string,
    filters: OrganizationFilters & { q: string },
    pageQuery: PageQuery,
  ): Promise<IdentityPage> {
    const within = sql.join(
      [sql`i.organization_id = ${organizationId}::uuid`, ...organizationConditions(filters)],
      ' AND ',
    );
    return rankedPage(this.db, filters.q, { within, indexed: false, filtered: true }, pageQuery);
  }
}

/**
 * Where a search looks: the condition on its cards (`i`), and whether the word index
 * (identity_search_terms: the publicly listed cards' words) holds them — the public
 * directory's do; an organization's, whatever their state, are read from its own rows.
 * `filtered`: the condition says more than the word index does (a filter, an organization).
 */
interface SearchScope {
  within: Sql;
  indexed: boolean;
  filtered: boolean;
}

/** A term of the query, or of feedback, as the first statement (termsStatement) reads it. */
interface TermRow {
  /** 1…MAX_TERMS: the query's words; above: feedback's. */
  n: number;
  /** tsqueries: the term anywhere, in class A (names), B (skill ids, tags), C (skill texts). */
  t: string;
  a_q: string;
  b_q: string;
  c_q: string;
  /** Cards holding it, counted up to DF_CAP. */
  df: number;
  /** Its weight: ln(1 + DF_CAP / df), × FEEDBACK_WEIGHT for feedback's words. */
  idf: number;
  /** Held by some but fewer than DF_CAP cards: it finds cards by itself (query_terms decides, once). */
  rare: boolean;
  /**
   * The exact words (lexemes) its prefix matches in the word index; null when more than
   * MAX_EXPANSIONS, or no index (an organization's). A feedback word: itself.
   */
  lexemes: string[] | null;
}

/** How many exact words a term's prefix may stand for (MAX_EXPANSIONS per stem), past which it stays a prefix. */
const MAX_EXPANSIONS = 16;

/** How deep a walk of one word's cards goes (in rank order) to find QUICK_CANDIDATES within the scope. */
const WALK_DEPTH = 2_000;

/** The least code point above every other: `stem || TOP` bounds the words starting with `stem`. */
const TOP = 'chr(1114111)';

/**
 * The first statement of a search: the query's terms (its first MAX_TERMS words that are
 * not stop words, each an English stem as a prefix; a number also as `-N`, as handles
 * hold it), how many cards hold each, and feedback's words when they find few cards.
 */
function termsStatement(words: string[], scope: SearchScope): Sql {
  const { within, indexed } = scope;
  // A term's cards, counted up to DF_CAP: from the word index — a prefix standing for one
  // exact word has one row a card, the first DF_CAP of them; for several, a card holding two
  // counts once, among the first 2 × DF_CAP rows — or from the cards.
  const count = indexed
    ? sql`CASE WHEN cardinality(l.lexemes) = 1
            THEN (SELECT count(*) FROM (SELECT 1 FROM identity_search_terms p WHERE p.lexeme = l.lexemes[1]
                                         LIMIT ${DF_CAP}::int) d)
            ELSE least(${DF_CAP}::int, (SELECT count(DISTINCT d.identity_id) FROM (
              SELECT p.identity_id FROM unnest(w.stems) AS s
               CROSS JOIN LATERAL (SELECT p.identity_id FROM identity_search_terms p
                                    WHERE p.lexeme >= s AND p.lexeme < s || ${sql.raw(TOP)}
                                    LIMIT ${2 * DF_CAP}::int) p
               LIMIT ${2 * DF_CAP}::int) d)) END`
    : sql`(SELECT count(*) FROM (SELECT 1 FROM identities i WHERE ${within} AND i.search_vector @@ w.t LIMIT ${DF_CAP}::int) d)`;
  const countWord = indexed
    ? sql`(SELECT count(*) FROM (SELECT 1 FROM identity_search_terms p WHERE p.lexeme = seed_words.lexeme LIMIT ${DF_CAP}::int) d)`
    : sql`(SELECT count(*) FROM (SELECT 1 FROM identities i WHERE ${within}
                               AND i.search_vector @@ quote_literal(seed_words.lexeme)::tsquery LIMIT ${DF_CAP}::int) d)`;
  // The exact words of each term's prefix, one index probe each (a loose index scan).
  const expansions = indexed
    ? sql`
    expansions (n, stem, lexeme, k) AS (
      SELECT w.n, s, (SELECT min(p.lexeme) FROM identity_search_terms p WHERE p.lexeme >= s AND p.lexeme < s || ${sql.raw(TOP)}), 1
        FROM words w, unnest(w.stems) AS s
      UNION ALL
      SELECT e.n, e.stem, (SELECT min(p.lexeme) FROM identity_search_terms p
                            WHERE p.lexeme > e.lexeme AND p.lexeme < e.stem || ${sql.raw(TOP)}), e.k + 1
        FROM expansions e WHERE e.lexeme IS NOT NULL AND e.k <= ${MAX_EXPANSIONS}::int),
    term_lexemes AS (
      SELECT n, CASE WHEN bool_or(k > ${MAX_EXPANSIONS}::int AND lexeme IS NOT NULL) THEN NULL
                     ELSE coalesce(array_agg(lexeme ORDER BY lexeme) FILTER (WHERE lexeme IS NOT NULL), '{}') END AS lexemes
        FROM expansions GROUP BY n),`
    : sql`term_lexemes AS (SELECT n, NULL::text[] AS lexemes FROM words),`;
  const classQuery = (cls: '' | 'A' | 'B' | 'C') =>
    sql.raw(`(SELECT string_agg(format('%L:*${cls}', s), ' | ') FROM unnest(stems) AS s)::tsquery`);
  return sql`
    WITH RECURSIVE words AS MATERIALIZED (
      SELECT row_number() OVER (ORDER BY pos)::int AS n, stems, ${classQuery('')} AS t, ${classQuery('A')} AS a_q,
             ${classQuery('B')} AS b_q, ${classQuery('C')} AS c_q
        FROM (SELECT pos, CASE WHEN w ~ '^[0-9]+$' THEN ARRAY[w, '-' || w] ELSE ARRAY[lex[1]] END AS stems
                FROM unnest(${words}::text[]) WITH ORDINALITY AS u(w, pos), ts_lexize('english_stem', w) AS lex
               WHERE cardinality(lex) > 0 ORDER BY pos LIMIT ${MAX_TERMS}::int) x),
    ${expansions}
    counted AS MATERIALIZED (SELECT w.n, w.t, w.a_q, w.b_q, w.c_q, ${count} AS df FROM words w JOIN term_lexemes l USING (n)),
    query_terms AS MATERIALIZED (
      SELECT n, t, a_q, b_q, c_q, df, ln(1 + ${DF_CAP}::float8 / greatest(1, df)) AS idf, df > 0 AND df < ${DF_CAP}::int AS rare
        FROM counted),
    -- The cards the query's words find (when there are few): by any rare word, else by every word held.
    query AS MATERIALIZED (
      SELECT string_agg('(' || t::text || ')', ' | ')::tsquery AS every_q,
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
    seed_words_counted AS MATERIALIZED (SELECT lexeme, seeds, ${countWord} AS df FROM seed_words),
    feedback AS (SELECT lexeme, seeds, df FROM seed_words_counted WHERE df > 1 AND df < ${DF_CAP}::int)
    SELECT q.n, q.t::text, q.a_q::text, q.b_q::text, q.c_q::text, q.df::int, q.idf, q.rare, l.lexemes
      FROM query_terms q JOIN term_lexemes l USING (n)
    UNION ALL
    -- The FEEDBACK_TERMS feedback words held by most seeds, rarest first, weighing FEEDBACK_WEIGHT.
    (SELECT ${MAX_TERMS}::int + row_number() OVER (ORDER BY seeds * ln(1 + ${DF_CAP}::float8 / df) DESC, lexeme)::int,
            quote_literal(lexeme), quote_literal(lexeme) || ':A', quote_literal(lexeme) || ':B', quote_literal(lexeme) || ':C',
            df::int, ${FEEDBACK_WEIGHT}::float8 * ln(1 + ${DF_CAP}::float8 / df), true, ARRAY[lexeme]
       FROM feedback ORDER BY 1 LIMIT ${FEEDBACK_TERMS}::int)
    ORDER BY n`;
}

/** A lexeme as a tsquery, in the class of fields `weights` when given. */
function lexemeQuery(lexeme: string, weights = ''): string {
  return `'${lexeme.replace(/\\/g, '\\\\').replace(/'/g, "''")}'${weights ? `:${weights}` : ''}`;
}

/** A term as a tsquery of its exact words when they are known (GIN finds their cards without expanding a prefix). */
function findingQuery(term: TermRow): string {
  return term.lexemes && term.lexemes.length > 0
    ? term.lexemes.map((lexeme) => lexemeQuery(lexeme)).join(' | ')
    : term.t;
}

/**
 * A term as the quick score checks a card for it (in the class of fields `weights` when
 * given): its one exact word when it stands for one — looked up in the card's words, not
 * scanned for a prefix (a sentence's page 8% less) — else its prefix. ts_rank always reads
 * the prefix (`t`): it scores an OR of words differently.
 */
function checkQuery(term: TermRow, weights: '' | 'A' | 'B' | 'C' = ''): string {
  if (term.lexemes?.length === 1) {
    return lexemeQuery(term.lexemes[0], weights);
  }
  return { '': term.t, A: term.a_q, B: term.b_q, C: term.c_q }[weights];
}

/**
 * A card's quick score, without ts_rank or trigrams: for each term, by its IDF, whether the
 * card holds it (COVERAGE) and the weight of the best class of fields that holds it. When
 * every match holds every word held (`allHeld`: cards found by all of them), that needs no
 * check, and a word no card holds adds nothing.
 */
function quickScore(terms: TermRow[], allHeld: boolean): Sql {
  const [d, c, b, a] = RANKING.weights.slice(1, -1).split(',').map(Number);
  const each = terms.flatMap((term, n) => {
    const weighted = `search.idfs[${n + 1}] * (${RANKING.coverage}
                   + CASE WHEN i.search_vector @@ search.a_q[${n + 1}] THEN ${a} WHEN i.search_vector @@ search.b_q[${n + 1}] THEN ${b}
                          WHEN i.search_vector @@ search.c_q[${n + 1}] THEN ${c} ELSE ${d} END)`;
    if (!allHeld) {
      return [`CASE WHEN i.search_vector @@ search.found_q[${n + 1}] THEN ${weighted} ELSE 0 END`];
    }
    return term.df > 0 ? [weighted] : [];
  });
  return sql.raw(each.length ? each.join('\n               + ') : '0');
}

/**
 * One branch of a walk: the word index's rows of `lexeme` (only those of class `weight`
 * when given), each ranked `rank` — the row's own weight, or a constant for every row.
 */
interface WalkBranch {
  lexeme: string;
  rank: Sql;
  weight?: number;
}

/**
 * The QUICK_CANDIDATES best of a search's cards by quick score, read from the word index in
 * that very order — rank (the weight of the best class holding a common word; a name word's
 * likeness), then newest — without reading the others: a merge of each branch's rows (a
 * card found by two of them once, at its best), the first WALK_DEPTH of them, those within
 * the scope. When that finds fewer, the matches (all of them, scored) decide instead.
 */
function walkedCandidates(branches: WalkBranch[], scope: SearchScope): Sql {
  const order = sql.raw('ORDER BY rank DESC, created_at DESC, identity_id DESC');
  const rows = branches.map(
    ({ lexeme, rank, weight }) =>
      sql`(SELECT identity_id, ${rank} AS rank, created_at FROM identity_search_terms
            WHERE lexeme = ${lexeme} ${weight === undefined ? sql`` : sql`AND weight = ${weight}::smallint`}
            ORDER BY weight DESC, created_at DESC, identity_id DESC LIMIT ${WALK_DEPTH}::int)`,
  );
  const walk = sql`SELECT * FROM (${sql.join(rows, ' UNION ALL ')}) u ${order} LIMIT ${WALK_DEPTH}::int`;
  // The word index holds exactly the listed cards: without a filter every walked row is in
  // the scope, and the walk stops once it has found enough. A filter is checked by the
  // planner's choice (a filter few cards pass is best hashed once, through its own index).
  const inScope = sql`SELECT w.* FROM (${walk}) w ${sql.where([
    scope.filtered
      ? sql`EXISTS (SELECT 1 FROM identities i WHERE i.id = w.identity_id AND ${scope.within})`
      : sql.empty,
  ])}`;
  // A card found by B branches comes at most B times, first at its best: the first
  // B × QUICK_CANDIDATES rows within the scope hold the first rows of the QUICK_CANDIDATES
  // best cards, and grouping them gives each its best rank. One branch's rows are one a
  // card, and go ungrouped.
  const cards =
    branches.length > 1
      ? sql`SELECT identity_id, max(rank) AS rank, max(created_at) AS created_at
              FROM (${inScope} ${order} LIMIT ${QUICK_CANDIDATES * branches.length}::int) w GROUP BY identity_id`
      : inScope;
  return sql`
    walked AS MATERIALIZED (SELECT w.identity_id AS id FROM (${cards}) w ${order} LIMIT ${QUICK_CANDIDATES}::int),
    candidates AS MATERIALIZED (
      SELECT id FROM walked WHERE (SELECT count(*) FROM walked) = ${QUICK_CANDIDATES}::int
      UNION ALL
      (SELECT id FROM matches WHERE (SELECT count(*) FROM walked) < ${QUICK_CANDIDATES}::int
        ORDER BY quick DESC, created_at DESC, id DESC LIMIT ${QUICK_CANDIDATES}::int)),`;
}

/** The terms that find a query's cards: any rare word or feedback's; when there is none, every word held. */
function findingTerms(terms: TermRow[]): TermRow[] {
  const asked = terms.filter((term) => term.n <= MAX_TERMS);
  const rare = asked.filter((term) => term.rare);
  return rare.length > 0
    ? [...rare, ...terms.filter((term) => term.n > MAX_TERMS)]
    : asked.filter((term) => term.df > 0);
}

/** A word of the names spelled like one of the query's (the names' lexicon): its lexeme, and how like it is. */
interface SimilarWord {
  lexeme: string;
  likeness: number;
}

/** How many of the names' words spelled like a query's find its cards: the likest. */
const MAX_SIMILAR_WORDS = 8;

/**
 * When no card holds any of a short query's words: the lexemes of the names' words spelled
 * like one of them (word_similarity at least the trigram threshold, which the caller sets),
 * the likest first — a lookup among the names' distinct words, not every card's names. The
 * lexicon holds every card's words, once held or not: only those some card of the scope
 * holds in its names count (a listed card's, in the word index; else the scope's own rows).
 */
function similarWordsStatement(words: string[], scope: SearchScope): Sql {
  // A listed card's names' word is in the word index (checked against a filter too); an
  // organization's names' lexemes are read once (a hashed subplan): as many rows as its
  // cards, whatever the number of words the lookup finds.
  const held = !scope.indexed
    ? sql`n.lexeme IN (SELECT v.lexeme FROM identities i CROSS JOIN LATERAL unnest(ts_filter(i.search_vector, '{a}')) AS v
                       WHERE ${scope.within})`
    : scope.filtered
      ? sql`EXISTS (SELECT 1 FROM identity_search_terms t JOIN identities i ON i.id = t.identity_id
                     WHERE t.lexeme = n.lexeme AND t.weight = 4::smallint AND ${scope.within})`
      : sql`EXISTS (SELECT 1 FROM identity_search_terms t WHERE t.lexeme = n.lexeme AND t.weight = 4::smallint)`;
  // Stop words are not looked up: "a" or "the" is like every word starting so.
  return sql`
    SELECT n.lexeme, max(word_similarity(q.w, n.word))::float8 AS likeness
      FROM unnest(${words}::text[]) AS q(w) JOIN identity_name_words n ON q.w <% n.word
     WHERE cardinality(ts_lexize('english_stem', q.w)) > 0 AND ${held}
     GROUP BY n.lexeme ORDER BY likeness DESC, n.lexeme LIMIT ${MAX_SIMILAR_WORDS}::int`;
}

/**
 * The second statement: one page. Cards are found by the finding terms, or, when no card
 * holds any of the query's words, by the names' words spelled like them (`similar`).
 * Candidates (the QUICK_CANDIDATES best by quick score) are scored in full and come first;
 * the other matches follow by their quick score, read only when a page reaches past the
 * candidates.
 */
function pageStatement(
  q: string,
  words: string[],
  terms: TermRow[],
  similar: SimilarWord[],
  scope: SearchScope,
  page: Keyset,
): Sql {
  const { within, indexed } = scope;
  const text = words.join(' ');
  const asked = terms.filter((term) => term.n <= MAX_TERMS);
  const liken = likenessScores(q, words, asked);
  const rare = asked.filter((term) => term.rare);
  const held = asked.filter((term) => term.df > 0);
  const idfSum = Math.max(
    asked.reduce((sum, term) => sum + term.idf, 0),
    1e-9,
  );
  const finding = findingTerms(terms);
  let matched: Sql;
  let walk: WalkBranch[] = [];
  if (finding.length > 0) {
    const matchQuery = finding.map((term) => `(${findingQuery(term)})`).join(rare.length > 0 ? ' | ' : ' & ');
    matched = sql`
      SELECT i.id, i.created_at, ((${quickScore(terms, rare.length === 0)}) / search.idf_sum)::float8 AS quick
        FROM identities i CROSS JOIN search
       WHERE ${within} AND i.search_vector @@ ${matchQuery}::tsquery`;
    // One common word (none rare, one held) whose exact words the word index knows: walk them.
    if (indexed && rare.length === 0 && held.length === 1) {
      walk = (held[0].lexemes ?? []).map((lexeme) => ({ lexeme, rank: sql`weight` }));
    }
  } else {
    // The cards whose names hold a word spelled like the query's; quick: the likest such word.
    const likeness = similar.map(
      ({ lexeme, likeness }) =>
        sql`CASE WHEN i.search_vector @@ ${lexemeQuery(lexeme, 'A')}::tsquery THEN ${likeness}::float8 END`,
    );
    const anyName = similar.map(({ lexeme }) => lexemeQuery(lexeme, 'A')).join(' | ');
    matched = sql`
      SELECT i.id, i.created_at, greatest(${sql.join(likeness, ', ')}) AS quick
        FROM identities i
       WHERE ${within} AND i.search_vector @@ ${anyName}::tsquery`;
    // The word index holds a word in class A (names) as weight 4.
    if (indexed) {
      walk = similar.map(({ lexeme, likeness }) => ({ lexeme, rank: sql`${likeness}::float8`, weight: 4 }));
    }
  }
  const candidates = walk.length
    ? walkedCandidates(walk, scope)
    : sql`candidates AS MATERIALIZED (
      SELECT id FROM matches ORDER BY quick DESC, created_at DESC, id DESC LIMIT ${QUICK_CANDIDATES}::int),`;
  const column = (pick: (term: TermRow) => string | number, of = terms) => of.map(pick);
  // Scored in full: the terms some card holds (the query's, feedback's); one no card holds adds nothing to any.
  const scoring = terms.filter((term) => term.df > 0);
  return sql`
    WITH search AS (
      SELECT ${column((term) => term.t, scoring)}::tsquery[] AS scored_q, ${column((term) => term.idf, scoring)}::float8[] AS scored_idfs,
             ${column((term) => checkQuery(term))}::tsquery[] AS found_q, ${column((term) => term.idf)}::float8[] AS idfs,
             ${column((term) => checkQuery(term, 'A'))}::tsquery[] AS a_q, ${column((term) => checkQuery(term, 'B'))}::tsquery[] AS b_q,
             ${column((term) => checkQuery(term, 'C'))}::tsquery[] AS c_q, ${idfSum}::float8 AS idf_sum),
    matches AS MATERIALIZED (${matched}),
    ${candidates}
    scored AS (
      SELECT i.id,
             ${TIER}::numeric
             + round(${SCORE_SCALE}::numeric * (
                 ${RANKING.relevance}::float8 * f.relevance / search.idf_sum
                 + ${RANKING.coverage}::float8 * f.covered / search.idf_sum
                 + ${RANKING.similarity}::float8 * f.similar * (f.similar >= ${RANKING.trigramThreshold}::float8)::int
               )::numeric) * ${CREATED_SCALE}::numeric
             + (extract(epoch FROM i.created_at) * 1000000)::bigint AS rank_key
        FROM candidates c
        JOIN identities i USING (id)
       CROSS JOIN search
       CROSS JOIN LATERAL (
         SELECT coalesce(sum(q.idf) FILTER (WHERE i.search_vector @@ q.t), 0) AS covered,
                coalesce(sum(q.idf * ts_rank(${RANKING.weights}::float4[], i.search_vector, q.t, ${RANKING.normalization}::int)), 0) AS relevance,
                CASE WHEN ${liken}::boolean THEN word_similarity(${text}, i.search_names)::float8 ELSE 0 END AS similar
           FROM unnest(search.scored_q, search.scored_idfs) AS q(t, idf)) f)
    SELECT ${IDENTITY_COLUMNS}, s.rank_key::text AS rank_key
      FROM (
        (SELECT r.id, r.rank_key FROM scored r WHERE ${page.after} ${page.tail})
        UNION ALL
        -- The other matches, after every candidate, by their quick score: read only when the page reaches them.
        (SELECT r.id, r.rank_key FROM (
           SELECT m.id, round(${SCORE_SCALE}::numeric * m.quick::numeric) * ${CREATED_SCALE}::numeric
                        + (extract(epoch FROM m.created_at) * 1000000)::bigint AS rank_key
             FROM matches m WHERE m.id NOT IN (SELECT id FROM candidates)) r
          WHERE ${page.after} ${page.tail})
        LIMIT ${page.limit + 1}::int) s
      JOIN identities i USING (id)
     ORDER BY s.rank_key DESC, s.id DESC`;
}

/**
 * One page of identities in `scope` ranked by relevance to `q` (RankedSearchRepository): its
 * terms, then its page — when no card holds any of a short query's words, after the names'
 * words spelled like them (in a transaction of its own, for the trigram threshold).
 */
async function rankedPage(db: Database, q: string, scope: SearchScope, pageQuery: PageQuery): Promise<IdentityPage> {
  const words = searchWords(q);
  const page = keyset('r', pageQuery, RANKED);
  const terms = await db.rows<TermRow>(termsStatement(words, scope));
  let similar: SimilarWord[] = [];
  const found = findingTerms(terms).length > 0;
  if (!found && words.length > 0 && words.length <= MAX_FUZZY_WORDS) {
    similar = await db.transaction(async (tx) => {
      // The trigram operator's threshold (`<%`), for this transaction only.
      await db.execute(
        sql`SELECT set_config('pg_trgm.word_similarity_threshold', ${String(RANKING.trigramThreshold)}, true)`,
        tx,
      );
      return db.rows<SimilarWord>(similarWordsStatement(words, scope), tx);
    });
  }
  const rows =
    found || similar.length > 0 ? await db.rows<RankedRow>(pageStatement(q, words, terms, similar, scope, page)) : [];
  const { items, nextCursor } = page.cut(rows, (row) => ({ at: row.rank_key, id: row.id }));
  return { items: items.map(toIdentity), nextCursor };
}

/** The words of `q`, lower-cased letters and digits only (never tsquery syntax), at most MAX_SEARCH_WORDS. */
export function searchWords(q: string): string[] {
  return (q.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).slice(0, MAX_SEARCH_WORDS);
}
