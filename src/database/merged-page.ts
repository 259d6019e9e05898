import { sql, type Sql } from './sql';

/**
 * One page (a Keyset, common/pagination.ts) from two keyset walks — statements that
 * end in the page's `after` and `tail` — each read in order from its own index: their
 * rows merged, a row both return kept once (UNION: at most twice the page to compare).
 * Excluding one walk's rows from the other instead makes that walk skip over every one
 * of them: all of an organization's own rows, when it is on both sides.
 */
export function mergedPage(page: { alias: string; tail: Sql }, first: Sql, second: Sql): Sql {
  const alias = sql.raw(page.alias);
  return sql`SELECT ${alias}.* FROM ((${first}) UNION (${second})) ${alias} ${page.tail}`;
}
