import { sql, type Sql } from './sql';

/**
 * The hour a time column falls in, as a whole number of hours since the Unix epoch (UTC):
 * the bucket of every per-hour count of the overview (docs/api.md §13, "The overview"),
 * which merges each module's counts by it. `column` is a constant of ours
 * (`alias.column`), never a value from a request.
 */
export function hourOf(column: string): Sql {
  return sql.raw(`floor(extract(epoch FROM ${column}) / 3600)::int`);
}
