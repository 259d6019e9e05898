/**
 * One way to write a statement: the `sql` tag. Interpolated values become numbered
 * parameters (`$1`, `$2`, …) and never touch the text; an interpolated `Sql` fragment
 * is spliced in with its parameters renumbered, so conditions compose without the
 * `$${params.push(x)}` bookkeeping:
 *
 *   const byScope = scope ? sql`AND k.scope = ${scope}` : sql.empty;
 *   await db.rows<KeyRow>(sql`SELECT … FROM api_keys k WHERE k.organization_id = ${org} ${byScope}`);
 *
 * Only repositories (and `src/database/`) write statements; see
 * test/architecture/sql-placement.spec.ts.
 */
export class Sql {
  /** Literal text between parameters, one more than `values`. */
  private constructor(
    private readonly strings: readonly string[],
    readonly values: readonly unknown[],
    /** Planned for its values on every run (sql.plannedPerRun), never kept as a generic plan. */
    readonly plannedPerRun = false,
  ) {}

  static of(strings: readonly string[], parts: readonly unknown[], plannedPerRun = false): Sql {
    const texts: string[] = [strings[0]];
    const values: unknown[] = [];
    parts.forEach((part, index) => {
      const next = strings[index + 1];
      if (part instanceof Sql) {
        plannedPerRun ||= part.plannedPerRun;
        texts[texts.length - 1] += part.strings[0];
        for (let i = 0; i < part.values.length; i++) {
          values.push(part.values[i]);
          texts.push(part.strings[i + 1]);
        }
        texts[texts.length - 1] += next;
      } else {
        values.push(part);
        texts.push(next);
      }
    });
    return new Sql(texts, values, plannedPerRun);
  }

  private built?: string;

  /** The statement's text with `$n` placeholders, as the driver takes it (built once). */
  get text(): string {
    this.built ??= this.strings.reduce((text, part, index) => `${text}$${index}${part}`);
    return this.built;
  }

  get isEmpty(): boolean {
    return this.values.length === 0 && this.strings.every((part) => part.trim() === '');
  }
}

export function sql(strings: TemplateStringsArray, ...parts: unknown[]): Sql {
  return Sql.of(strings, parts);
}

/** Nothing: an absent optional condition. */
sql.empty = Sql.of([''], []);

/**
 * Trusted text spliced in as is: a column list, an alias, a constant of ours.
 * Never a value from a request.
 */
sql.raw = (text: string): Sql => Sql.of([text], []);

/**
 * The fragment, marking every statement it is part of as planned for its values on
 * each run (Database runs it unnamed) instead of being prepared once. A prepared
 * statement's plan is, from its sixth run on, a generic one when that looks no
 * costlier — made without the values, it costs every value as an average one. Where
 * the best plan depends on the value, that is wrong for the values that matter: a
 * page of one caller's rows is a walk of the caller's index that stops after the
 * page for a caller with many, but a generic plan that expects a caller's 40 rows
 * reads and sorts all of them — 2,000 for a page of 51 (test/ledger/plans-at-scale).
 * Planning costs a fraction of a millisecond a run; keyset pages pay it.
 */
sql.plannedPerRun = (fragment: Sql): Sql => Sql.of(['', ''], [fragment], true);

/** The fragments joined by `separator`, empty ones skipped. */
sql.join = (fragments: readonly Sql[], separator = ', '): Sql => {
  const kept = fragments.filter((fragment) => !fragment.isEmpty);
  if (kept.length === 0) return sql.empty;
  const strings = ['', ...kept.slice(1).map(() => separator), ''];
  return Sql.of(strings, kept);
};

/** `WHERE a AND b …` over the non-empty conditions, or nothing. */
sql.where = (conditions: readonly Sql[]): Sql => {
  const joined = sql.join(conditions, ' AND ');
  return joined.isEmpty ? sql.empty : sql`WHERE ${joined}`;
};

/** Up to this many rows, `sql.rows` writes a VALUES list; beyond, unnest. */
const VALUES_UP_TO = 4;

/**
 * Rows given as values, as a FROM item `alias(column…, ord)`: each column of its
 * PostgreSQL type, `ord` the row's position (1, 2, …). A few rows are a VALUES list —
 * PostgreSQL knows how many, so after a few runs it keeps one plan for the statement
 * instead of planning it again each time — more are `unnest` over one array per
 * column (as many parameters whatever the count; planned each time, as the count is
 * only known then).
 */
sql.rows = (
  alias: string,
  columns: ReadonlyArray<readonly [name: string, type: string]>,
  rows: ReadonlyArray<readonly unknown[]>,
): Sql => {
  const names = `${alias}(${[...columns.map(([name]) => name), 'ord'].join(', ')})`;
  const last = columns.length - 1;
  // The text written straight between the values: a fragment a value would cost
  // objects by the dozen for each row of a send.
  if (rows.length > 0 && rows.length <= VALUES_UP_TO) {
    const strings = ['(VALUES ('];
    const values: unknown[] = [];
    rows.forEach((row, r) =>
      columns.forEach(([, type], c) => {
        values.push(row[c]);
        const end = r < rows.length - 1 ? '), (' : `)) AS ${names}`;
        strings.push(c < last ? `::${type}, ` : `::${type}, ${r + 1}::bigint${end}`);
      }),
    );
    return Sql.of(strings, values);
  }
  const strings = ['unnest('];
  const values = columns.map(([, type], c) => {
    strings.push(c < last ? `::${type}[], ` : `::${type}[]) WITH ORDINALITY AS ${names}`);
    return arrayLiteral(rows.map((row) => row[c]));
  });
  return Sql.of(strings, values);
};

const ESCAPED = /[\\"]/;

/**
 * A column's values as a PostgreSQL array literal (`{"a","b",NULL}`) — what the driver
 * would make of the array, made here because the driver escapes every element with
 * two regular expressions, and most (ids, times, numbers) hold nothing to escape:
 * under group commit a statement's arrays carry hundreds of elements. Times go as
 * ISO 8601 (UTC; for timestamptz columns, as every time of ours is), other objects
 * as JSON, as the driver sends them; the values are scalars, times and JSON objects.
 */
export function arrayLiteral(values: readonly unknown[]): string {
  let literal = '{';
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (i > 0) literal += ',';
    if (value == null) {
      literal += 'NULL';
      continue;
    }
    const text =
      value instanceof Date
        ? Number.isNaN(value.getTime())
          ? 'invalid date' // refused by PostgreSQL, as the driver's text for it is
          : value.toISOString()
        : typeof value === 'object'
          ? JSON.stringify(value)
          : String(value);
    literal += ESCAPED.test(text) ? `"${text.replace(/[\\"]/g, '\\$&')}"` : `"${text}"`;
  }
  return `${literal}}`;
}
