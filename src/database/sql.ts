/**
 * One way to write a statement: the `sql` tag. Interpolated values become numbered
 * parameters (`$1`, `$2`, …) and never touch the text; an interpolated `Sql` fragment
 * is spliced in with its parameters renumbered, so conditions compose without the
 * `$${params.push(x)}` bookkeeping:
 *
 *   const byScope = scope ? sql`AND k.scope = ${scope}` : sql.empty;
 *   await db.rows<KeyRecord>(sql`SELECT … FROM api_keys k WHERE k.organization_id = ${org} ${byScope}`);
 *
 * Only repositories (and `src/database/`) write statements; see
 * test/architecture/sql-placement.spec.ts.
 */
export class Sql {
  /** Literal text around `parts`, one more than them. */
  private constructor(
    private readonly strings: readonly string[],
    /** Each a value (a parameter) or a fragment spliced in; flattened once, when the statement is run. */
    private readonly parts: readonly unknown[],
    /** Planned for its values on every run (sql.plannedPerRun), never kept as a generic plan. */
    readonly plannedPerRun: boolean,
  ) {}

  /**
   * A fragment keeps its parts as given: composing is a constant cost however large
   * they are, and the statement's text and values are written out once, in one walk,
   * when it runs (a send's statement is a fragment of fragments five deep, 74 values).
   */
  static of(strings: readonly string[], parts: readonly unknown[], plannedPerRun = false): Sql {
    // A text's Shape (below) takes its parts' number from its strings.
    if (strings.length !== parts.length + 1) {
      throw new Error('an Sql has one more literal text than parts');
    }
    for (let i = 0; i < parts.length && !plannedPerRun; i++) {
      const part = parts[i];
      plannedPerRun = part instanceof Sql && part.plannedPerRun;
    }
    return new Sql(strings, parts, plannedPerRun);
  }

  private flat?: { text: string; values: unknown[] };

  /** The statement's text with `$n` placeholders, as the driver takes it (written once). */
  get text(): string {
    return this.flatten().text;
  }

  /** Its parameters, in the order of their placeholders. */
  get values(): readonly unknown[] {
    return this.flatten().values;
  }

  get isEmpty(): boolean {
    return (
      this.strings.every((text) => text.trim() === '') &&
      this.parts.every((part) => part instanceof Sql && part.isEmpty)
    );
  }

  private flatten(): { text: string; values: unknown[] } {
    if (!this.flat) {
      const values: unknown[] = [];
      const shape = this.walk(SHAPES, values);
      this.flat = { text: shape ? shape.textOf(() => this.writeText()) : this.writeText(), values };
    }
    return this.flat;
  }

  /**
   * Collects the values in order and follows the statement's shape (Shape) from `at`:
   * undefined when it has no cached shape (a text written from an array that is not
   * frozen, or no room for more shapes), the values collected all the same.
   */
  private walk(at: Shape | undefined, values: unknown[]): Shape | undefined {
    const { strings, parts } = this;
    let shape = at && Object.isFrozen(strings) ? at.next(strings) : undefined;
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i];
      if (part instanceof Sql) {
        shape = part.walk(shape, values);
      } else {
        values.push(part);
        shape = shape?.next(VALUE);
      }
    }
    return shape;
  }

  private writeText(): string {
    const pieces: string[] = [];
    this.writeInto(pieces, []);
    return pieces.join('');
  }

  private writeInto(pieces: string[], values: unknown[]): void {
    const { strings, parts } = this;
    pieces.push(strings[0]);
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i];
      if (part instanceof Sql) {
        part.writeInto(pieces, values);
      } else {
        pieces.push(`$${values.push(part)}`);
      }
      pieces.push(strings[i + 1]);
    }
  }
}

/**
 * A statement's text, written once for each shape of statement: a statement's text
 * depends only on the literal text of each fragment (its `strings`, an array that
 * never changes once frozen: a template's, or one of sql.raw's, sql.join's, sql.rows')
 * and on which parts are values, so the fragments' arrays and the values' places, in
 * the order they are written, name the text — an array also says how many parts
 * follow it, so no path is the start of another. They are the path through a tree of
 * Shapes, whose node at the path's end keeps the text. Found when the statement is
 * run, by identity, one step a fragment or value, the text is the same string each
 * time, whose hash V8 keeps: Database's statement names need not hash it again. In a
 * round trip's CPU profile, writing texts and naming them went from 178 µs to ~40 µs
 * (BENCHMARKS.md, "Statement texts written once a shape"; a shape worked out for
 * every fragment as it is made, tried before, cost more than it saved). Kept for the process's life, at most
 * MAX_SHAPES nodes and MAX_TEXTS texts — the shapes are the repositories' statements,
 * a bounded set; past either bound a text is written out each time, as one from an
 * array that is not frozen always is.
 */
class Shape {
  private static nodes = 0;
  private static texts = 0;
  /** The text of the statements whose path ends here, once written. */
  private text?: string;
  /** The first step from here, and its node; further steps in `more`. */
  private token: unknown;
  private only?: Shape;
  private more?: Map<unknown, Shape>;

  next(token: unknown): Shape | undefined {
    if (this.only && this.token === token) {
      return this.only;
    }
    const known = this.more?.get(token);
    if (known) {
      return known;
    }
    if (Shape.nodes >= MAX_SHAPES) {
      return undefined;
    }
    Shape.nodes += 1;
    const created = new Shape();
    if (!this.only) {
      this.token = token;
      this.only = created;
    } else {
      (this.more ??= new Map()).set(token, created);
    }
    return created;
  }

  /** The text of this shape's statements: `write` writes it the first time (each time, past MAX_TEXTS). */
  textOf(write: () => string): string {
    if (this.text !== undefined) {
      return this.text;
    }
    const text = write();
    if (Shape.texts < MAX_TEXTS) {
      Shape.texts += 1;
      this.text = text;
    }
    return text;
  }
}

const MAX_SHAPES = 200_000;
const MAX_TEXTS = 5_000;
/** A value's place in a path of Shapes. */
const VALUE = Symbol('value');
const SHAPES = new Shape();

/**
 * Frozen arrays for texts of ours (sql.raw's, by text; sql.join's, by separator and
 * count), the same one each time, so statements made of them have a Shape: up to
 * MAX_INTERNED, past which they are made afresh.
 */
const MAX_INTERNED = 10_000;
let internedCount = 0;
const rawStrings = new Map<string, readonly string[]>();
const joinStrings = new Map<string, Array<readonly string[]>>();

/** `strings` frozen and handed to `keep`, or, past MAX_INTERNED, as they are. */
function interned(strings: string[], keep: (strings: readonly string[]) => void): readonly string[] {
  if (internedCount >= MAX_INTERNED) {
    return strings;
  }
  internedCount += 1;
  keep(Object.freeze(strings));
  return strings;
}

export function sql(strings: TemplateStringsArray, ...parts: unknown[]): Sql {
  return Sql.of(strings, parts);
}

/** Nothing: an absent optional condition. */
sql.empty = Sql.of(Object.freeze(['']), []);

/**
 * Trusted text spliced in as is: a column list, an alias, a constant of ours.
 * Never a value from a request.
 */
sql.raw = (text: string): Sql =>
  Sql.of(rawStrings.get(text) ?? interned([text], (strings) => rawStrings.set(text, strings)), []);

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
sql.plannedPerRun = (fragment: Sql): Sql => Sql.of(AROUND, [fragment], true);

const AROUND: readonly string[] = Object.freeze(['', '']);

/** The fragments joined by `separator`, empty ones skipped. */
sql.join = (fragments: readonly Sql[], separator = ', '): Sql => {
  const kept = fragments.filter((fragment) => !fragment.isEmpty);
  if (kept.length === 0) {
    return sql.empty;
  }
  const strings =
    joinStrings.get(separator)?.[kept.length] ??
    interned(['', ...kept.slice(1).map(() => separator), ''], (made) => {
      const byCount = joinStrings.get(separator) ?? [];
      byCount[kept.length] = made;
      joinStrings.set(separator, byCount);
    });
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
sql.rows = (alias: string, columns: Columns, rows: ReadonlyArray<readonly unknown[]>): Sql => {
  if (rows.length > 0 && rows.length <= VALUES_UP_TO) {
    const values: unknown[] = [];
    for (const row of rows) {
      for (let c = 0; c < columns.length; c++) {
        values.push(row[c]);
      }
    }
    return Sql.of(rowsText(alias, columns, rows.length), values);
  }
  return Sql.of(
    rowsText(alias, columns, 0),
    columns.map((_, c) => arrayLiteral(rows.map((row) => row[c]))),
  );
};

type Columns = ReadonlyArray<readonly [name: string, type: string]>;

/**
 * sql.rows' text between its values — for `count` rows a VALUES list, for 0 the
 * unnest — written once for each alias and count of a column list (WriteShape's are
 * declared once), so a send's rows cost only their values. A column list is a constant
 * of ours: its texts, frozen, stay as long as the Shapes of the statements they are in.
 */
function rowsText(alias: string, columns: Columns, count: number): readonly string[] {
  let byAlias = rowsTexts.get(columns);
  if (!byAlias) {
    rowsTexts.set(columns, (byAlias = new Map()));
  }
  const key = `${alias} ${count}`;
  const known = byAlias.get(key);
  if (known) {
    return known;
  }
  const names = `${alias}(${[...columns.map(([name]) => name), 'ord'].join(', ')})`;
  const last = columns.length - 1;
  const strings = [count > 0 ? '(VALUES (' : 'unnest('];
  if (count === 0) {
    columns.forEach(([, type], c) =>
      strings.push(c < last ? `::${type}[], ` : `::${type}[]) WITH ORDINALITY AS ${names}`),
    );
  }
  for (let r = 0; r < count; r++) {
    columns.forEach(([, type], c) => {
      const end = r < count - 1 ? '), (' : `)) AS ${names}`;
      strings.push(c < last ? `::${type}, ` : `::${type}, ${r + 1}::bigint${end}`);
    });
  }
  byAlias.set(key, Object.freeze(strings));
  return strings;
}

const rowsTexts = new WeakMap<Columns, Map<string, readonly string[]>>();

const ESCAPED = /[\\"]/;
const ESCAPED_ALL = /[\\"]/g;
/** What JSON.stringify escapes besides quotes and backslashes: control characters, lone surrogates (all surrogates, to be plain). */
const JSON_ESCAPES_MORE = /[\u0000-\u001f\ud800-\udfff]/;

/**
 * A column's values as a PostgreSQL array literal (`{"a","b",NULL}`) — what the driver
 * would make of the array, made here because the driver escapes every element with
 * two regular expressions, and most (ids, times, numbers) hold nothing to escape:
 * under group commit a statement's arrays carry hundreds of elements. Times go as
 * ISO 8601 (UTC; for timestamptz columns, as every time of ours is), other objects
 * as JSON, as the driver sends them; the values are scalars, times and JSON objects.
 * An element with quotes or backslashes — a JSON text, mostly — is quoted by
 * JSON.stringify when that escapes nothing else (then it escapes exactly `"` and `\`,
 * as an array literal does, natively: a send's event JSON costs a third as much).
 */
export function arrayLiteral(values: readonly unknown[]): string {
  let literal = '{';
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (i > 0) {
      literal += ',';
    }
    if (value == null) {
      literal += 'NULL';
      continue;
    }
    const text = typeof value === 'string' ? value : textOf(value);
    if (!ESCAPED.test(text)) {
      literal += '"' + text + '"';
    } else if (!JSON_ESCAPES_MORE.test(text)) {
      literal += JSON.stringify(text);
    } else {
      literal += '"' + text.replace(ESCAPED_ALL, '\\$&') + '"';
    }
  }
  return literal + '}';
}

/** A value other than a string as the driver would send it. */
function textOf(value: NonNullable<unknown>): string {
  if (value instanceof Date) {
    return Number.isNaN(value.getTime())
      ? 'invalid date' // refused by PostgreSQL, as the driver's text for it is
      : value.toISOString();
  }
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}
