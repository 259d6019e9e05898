import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { badRequest } from './app-error';
import { isUuid } from './parse-id.pipe';
import { sql, type Sql } from '../database/sql';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 200;

/** `limit` and opaque `cursor` query parameters, shared by every list route. */
export class PageQuery {
  @ApiPropertyOptional({ minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE_SIZE)
  limit?: number;

  @ApiPropertyOptional({ description: "Opaque cursor from a previous page's next_cursor." })
  @IsOptional()
  @IsString()
  @MaxLength(512)
  cursor?: string;
}

/** A keyset position: the sort value and the id of the last row of a page. */
export interface KeysetCursor {
  at: string;
  id: string;
}

const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}:\d{2})$/;

/** An ISO 8601 timestamp that PostgreSQL accepts too (years 1–9999, a real date). */
export function isTimestamp(value: unknown): value is string {
  return (
    typeof value === 'string' &&
    ISO_TIMESTAMP.test(value) &&
    !Number.isNaN(Date.parse(value)) &&
    !value.startsWith('0000')
  );
}

export function encodeCursor(position: KeysetCursor): string {
  return Buffer.from(JSON.stringify([position.at, position.id])).toString('base64url');
}

/** The usual keyset position: a creation timestamp and a uuid. */
const creationKey = (at: unknown, id: unknown) => isTimestamp(at) && isUuid(id);

/** Decodes a cursor; `valid` checks its two values (by default a timestamp and a uuid). */
export function decodeCursor(
  cursor: string | undefined,
  valid: (at: unknown, id: unknown) => boolean = creationKey,
): KeysetCursor | null {
  if (cursor === undefined) {
    return null;
  }
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (
      Array.isArray(value) &&
      value.length === 2 &&
      typeof value[0] === 'string' &&
      typeof value[1] === 'string' &&
      valid(value[0], value[1])
    ) {
      return { at: value[0], id: value[1] };
    }
  } catch {
    // fall through
  }
  throw badRequest('invalid_cursor', 'The cursor is not valid; use the next_cursor of a previous page.');
}

/**
 * Cuts one extra fetched row off a page and derives next_cursor from the last
 * row kept. Callers fetch `limit + 1` rows ordered by (created_at DESC, id DESC).
 */
export function pageOf<T>(
  rows: T[],
  limit: number,
  position: (row: T) => KeysetCursor,
): { items: T[]; nextCursor: string | null } {
  const items = rows.slice(0, limit);
  const nextCursor = rows.length > limit ? encodeCursor(position(items[items.length - 1])) : null;
  return { items, nextCursor };
}

/** The keyset position of a row in creation order (the `position` of pageOf). */
export const creationPosition = (row: { created_at: Date; id: string }): KeysetCursor => ({
  at: row.created_at.toISOString(),
  id: row.id,
});

/** creationPosition of a camelCase record. */
export const recordCreationPosition = (record: { createdAt: Date; id: string }): KeysetCursor => ({
  at: record.createdAt.toISOString(),
  id: record.id,
});

export function pageLimit(query: PageQuery): number {
  return query.limit ?? DEFAULT_PAGE_SIZE;
}

/** How a list is ordered for keyset paging: two columns, both descending unless said. */
export interface KeysetOrder {
  /** The sort column and the tiebreaker, with the casts their cursor values need. */
  columns: readonly [{ name: string; cast: string }, { name: string; cast: string }];
  direction: 'ASC' | 'DESC';
  /** Checks a decoded cursor's two values. */
  valid: (at: unknown, id: unknown) => boolean;
}

/** Newest first: (created_at DESC, id DESC), the order of every REST list. */
export const NEWEST_FIRST: KeysetOrder = {
  columns: [
    { name: 'created_at', cast: 'timestamptz' },
    { name: 'id', cast: 'uuid' },
  ],
  direction: 'DESC',
  valid: creationKey,
};

/**
 * One keyset page of a list: the condition that starts it after the cursor, the
 * ORDER BY … LIMIT that ends the statement (one extra row, to know whether another
 * page follows), and the cut of the fetched rows into the page and its next_cursor.
 * The one pagination helper: every list goes through it.
 *
 *   const page = keyset('k', query);
 *   const rows = await db.rows<Row>(sql`SELECT … FROM api_keys k WHERE … AND ${page.after} ${page.tail}`);
 *   return page.cut(rows, creationPosition);
 */
export class Keyset {
  readonly cursor: KeysetCursor | null;

  constructor(
    readonly alias: string,
    cursor: string | undefined,
    readonly limit: number,
    readonly order: KeysetOrder = NEWEST_FIRST,
  ) {
    this.cursor = decodeCursor(cursor, order.valid);
  }

  /** The condition "after the cursor" (TRUE on the first page). */
  get after(): Sql {
    if (!this.cursor) {
      return sql`TRUE`;
    }
    const [at, id] = this.order.columns;
    const a = this.alias;
    const comparison = this.order.direction === 'DESC' ? '<' : '>';
    return sql`(${sql.raw(`${a}.${at.name}, ${a}.${id.name}`)}) ${sql.raw(comparison)} (${this.cursor.at}::${sql.raw(at.cast)}, ${this.cursor.id}::${sql.raw(id.cast)})`;
  }

  /**
   * `ORDER BY … LIMIT limit + 1`, the statement's end. The statement is planned for
   * its values on each run (sql.plannedPerRun): how best to read a page of someone's
   * rows depends on how many they have.
   */
  get tail(): Sql {
    return sql.plannedPerRun(this.preparedTail);
  }

  /**
   * `tail` for a statement whose plan does not depend on whose rows it reads — the
   * public directory's search, which chooses between a bounded walk and reading the
   * matches itself instead of leaving it to estimates — kept prepared, planned once.
   */
  get preparedTail(): Sql {
    const [at, id] = this.order.columns;
    const d = this.order.direction;
    return sql.raw(`ORDER BY ${this.alias}.${at.name} ${d}, ${this.alias}.${id.name} ${d} LIMIT ${this.limit + 1}`);
  }

  /** The page's rows and the cursor of the next page (null on the last). */
  cut<T>(rows: T[], position: (row: T) => KeysetCursor): { items: T[]; nextCursor: string | null } {
    return pageOf(rows, this.limit, position);
  }
}

/** The keyset page a list query (`limit`, `cursor`) asks for, on the table aliased `alias`. */
export function keyset(alias: string, query: PageQuery, order: KeysetOrder = NEWEST_FIRST): Keyset {
  return new Keyset(alias, query.cursor, pageLimit(query), order);
}
