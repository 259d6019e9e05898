import { sql, type Sql } from './sql';

type Hook = () => Promise<void> | void;

/** A member's RETURNING rows, as JSON (timestamps arrive as ISO strings). */
export type BatchRows = Array<Record<string, unknown>>;

/** A row of a batch's statement: which member returned it, and the row. */
export interface TaggedRow {
  member: number;
  row: Record<string, unknown>;
}

interface Member {
  write: Sql | ShapedWrite;
  /** Called with the member's RETURNING rows once the batch has committed. */
  returned?: (rows: BatchRows) => void;
}

type Columns = ReadonlyArray<readonly [name: string, type: string]>;
type Rows = ReadonlyArray<readonly unknown[]>;

/**
 * A write over rows given as values — one `sql.rows` FROM item per named set — whose
 * statement is the same whatever their number: `build` gets each set's FROM item
 * (its alias the set's name). Where batches go together (group commit), the members
 * of one shape become one member over all their rows: one INSERT of 16 rows costs
 * PostgreSQL far less than 16 INSERTs of one (each is a plan node to start, its
 * table's indexes to open, its check constraints to read), and past a few rows the
 * text no longer depends on how many batches went together (`unnest`), so a group is
 * planned once. `routeBy` says how a merged member's RETURNING rows find their batch:
 * a returned column holding a value of a set's column, unique to one batch (a member
 * whose rows are wanted and that has no route is never merged).
 */
export class WriteShape<S extends string = string> {
  private static declared = 0;
  /** Tells shapes apart in a batch's kind (WriteBatch.kind). */
  readonly id = `#${(WriteShape.declared += 1)}`;

  /** Where `routeBy.column` sits in its set's rows (-1 without a route). */
  readonly routeColumn: number;

  constructor(
    readonly sets: Readonly<Record<S, Columns>>,
    readonly build: (from: Readonly<Record<S, Sql>>) => Sql,
    readonly routeBy?: { returned: string; set: NoInfer<S>; column: string },
  ) {
    this.routeColumn = routeBy ? (sets[routeBy.set]?.findIndex(([name]) => name === routeBy.column) ?? -1) : -1;
    if (routeBy && this.routeColumn < 0) {
      throw new Error(`a WriteShape routes by ${routeBy.set}.${routeBy.column}, which its rows do not have`);
    }
  }

  /** This write over these rows. */
  of(rows: Readonly<Record<S, Rows>>): ShapedWrite {
    // A shape is only ever used with the rows it was declared with: the cast forgets S.
    return new ShapedWrite(this as unknown as WriteShape, rows);
  }
}

/** A WriteShape's write over some rows; see WriteShape. */
export class ShapedWrite {
  constructor(
    readonly shape: WriteShape,
    readonly rows: Readonly<Record<string, Rows>>,
  ) {}

  statement(): Sql {
    const from: Record<string, Sql> = {};
    for (const [alias, columns] of Object.entries(this.shape.sets)) {
      from[alias] = sql.rows(alias, columns, this.rows[alias]);
    }
    return this.shape.build(from);
  }

  /** The route keys of its rows (see WriteShape.routeBy; a row without one returns nothing), or none. */
  keys(): string[] {
    const { routeBy: route, routeColumn: column } = this.shape;
    if (!route) {
      return [];
    }
    return this.rows[route.set].flatMap((row) => (row[column] == null ? [] : [routeKey(row[column])]));
  }
}

const routeKey = (value: unknown): string => String(value).toLowerCase();

/** Where a group's member came from: a batch, and the member's index in it. */
interface Owner {
  batch: number;
  member: number;
}

/** Members of one shape from several batches becoming one (WriteBatch.together). */
class Merging {
  readonly rows: Record<string, Array<readonly unknown[]>>;
  readonly owners = new Map<string, Owner>();

  constructor(
    readonly shape: WriteShape,
    first: ShapedWrite,
    owner: Owner,
  ) {
    this.rows = Object.fromEntries(Object.keys(shape.sets).map((set) => [set, []]));
    this.join(first, owner);
  }

  /** Takes `write`'s rows, unless one of its route keys is another batch's. */
  join(write: ShapedWrite, owner: Owner): boolean {
    const keys = write.keys();
    if (keys.some((key) => this.owners.has(key))) {
      return false;
    }
    for (const key of keys) {
      this.owners.set(key, owner);
    }
    for (const set of Object.keys(this.rows)) {
      this.rows[set].push(...write.rows[set]);
    }
    return true;
  }

  /** The batch a returned row of the merged member belongs to. */
  ownerOf(row: Record<string, unknown>): Owner {
    const route = this.shape.routeBy!;
    const owner = this.owners.get(routeKey(row[route.returned]));
    if (!owner) {
      throw new Error(`a merged write returned a row with an unknown ${route.returned}`);
    }
    return owner;
  }
}

/**
 * Writes that need no answer before they commit, sent together as one statement
 * (`Database.batch`): each member becomes a data-modifying CTE of
 * `WITH w0 AS (…), w1 AS (…) SELECT …`. PostgreSQL runs a single statement as its own
 * transaction, so the members commit together or not at all, in one round trip and
 * without BEGIN/COMMIT. Foreign keys are checked at the end of the statement, so a
 * member may reference a row another member inserts.
 *
 * What a member may not do (PostgreSQL's rules for data-modifying CTEs): read
 * another member's effect (they all see the snapshot the statement started with; use
 * ids chosen by the caller instead of one member's RETURNING), change a row that
 * another member changes, or hold a data-modifying WITH of its own.
 */
export class WriteBatch {
  private readonly members: Member[] = [];
  private readonly hooks: Hook[] = [];
  private committed = false;

  /** Adds a write; `returned` gets its RETURNING rows once the batch has committed. */
  write(write: Sql | ShapedWrite, returned?: (rows: BatchRows) => void): void {
    if (this.committed) {
      throw new Error('this batch has been sent; start another');
    }
    this.members.push({ write, returned });
    this.built = undefined;
  }

  /** Runs `hook` once the batch has committed (never when it fails). */
  afterCommit(hook: Hook): void {
    if (this.committed) {
      throw new Error('this batch has been sent; start another');
    }
    this.hooks.push(hook);
  }

  get isEmpty(): boolean {
    return this.members.length === 0;
  }

  /**
   * What batches that go together as one statement have in common (Database.batch
   * groups by it): their members' texts, a WriteShape standing for its own — found
   * without building the batch's statement, which a batch that goes together never needs.
   */
  kind(): string {
    return this.members.map(({ write }) => (write instanceof ShapedWrite ? write.shape.id : write.text)).join('\n');
  }

  private built?: Sql;

  /** The one statement: every member a CTE; the rows of those that asked for them, tagged by member. */
  statement(): Sql {
    this.built ??= batchStatement(this.members);
    return this.built;
  }

  /**
   * Several batches as one statement (their members one after the other, those of one
   * WriteShape merged into the first of them), and how to hand each batch its own rows
   * of its result. They commit together or not at all: members of different batches
   * must not touch the same rows either.
   */
  static together(batches: readonly WriteBatch[]): {
    statement: Sql;
    split: (rows: ReadonlyArray<TaggedRow>) => TaggedRow[][];
  } {
    type GroupMember = { write: Sql | ShapedWrite | Merging; returned: boolean; owner: Owner };
    const members: GroupMember[] = [];
    const merging = new Map<WriteShape, GroupMember & { write: Merging }>();
    batches.forEach((batch, b) =>
      batch.members.forEach(({ write, returned }, m) => {
        const owner = { batch: b, member: m };
        if (write instanceof ShapedWrite && (!returned || write.shape.routeBy)) {
          const open = merging.get(write.shape);
          if (open?.write.join(write, owner)) {
            open.returned ||= !!returned;
            return;
          }
          if (!open) {
            const started = { write: new Merging(write.shape, write, owner), returned: !!returned, owner };
            merging.set(write.shape, started);
            members.push(started);
            return;
          }
        }
        members.push({ write, returned: !!returned, owner });
      }),
    );
    const statement = batchStatement(
      members.map(({ write, returned }) => ({
        write: write instanceof Merging ? new ShapedWrite(write.shape, write.rows) : write,
        returned,
      })),
    );
    return {
      statement,
      split: (rows) => {
        const own: TaggedRow[][] = batches.map(() => []);
        for (const { member, row } of rows) {
          const { write, owner } = members[member];
          const { batch, member: index } = write instanceof Merging && write.shape.routeBy ? write.ownerOf(row) : owner;
          own[batch].push({ member: index, row });
        }
        return own;
      },
    };
  }

  /**
   * Hands each member its rows (from `statement()`'s result) and runs the after-commit
   * hooks — or, for a batch sent inside a transaction, hands them to `defer`, which runs
   * them once that transaction commits.
   */
  async settle(rows: ReadonlyArray<TaggedRow>, defer?: (hook: Hook) => void): Promise<void> {
    this.committed = true;
    const byMember = new Map<number, BatchRows>();
    for (const { member, row } of rows) {
      const list = byMember.get(member) ?? [];
      list.push(row);
      byMember.set(member, list);
    }
    this.members.forEach((member, index) => member.returned?.(byMember.get(index) ?? []));
    for (const hook of this.hooks) {
      if (defer) {
        defer(hook);
      } else {
        await hook();
      }
    }
  }
}

/** `WITH w0 AS (…), … SELECT member, row FROM …`: the independent writes of one unit as one statement. */
export function batchStatement(members: ReadonlyArray<{ write: Sql | ShapedWrite; returned?: unknown }>): Sql {
  if (members.length === 0) {
    throw new Error('an empty batch has no statement');
  }
  const ctes = sql.join(
    members.map((member, index) => sql`${memberSql(index).name} AS (${sqlOf(member.write)})`),
    ',\n',
  );
  const reads = members.flatMap((member, index) => (member.returned ? [memberSql(index).rows] : []));
  const select = reads.length > 0 ? sql.join(reads, '\nUNION ALL\n') : NO_ROWS;
  return sql`WITH ${ctes}\n${select}`;
}

const NO_ROWS = sql.raw('SELECT NULL::int AS member, NULL::jsonb AS row WHERE false');

/** A member's CTE name (`w3`) and the read of its rows, by its index: written once each. */
const memberSqls: Array<{ name: Sql; rows: Sql }> = [];

function memberSql(index: number): { name: Sql; rows: Sql } {
  return (memberSqls[index] ??= {
    name: sql.raw(`w${index}`),
    rows: sql.raw(`SELECT ${index} AS member, to_jsonb(w${index}) AS row FROM w${index}`),
  });
}

/** A member's statement. */
export function sqlOf(write: Sql | ShapedWrite): Sql {
  return write instanceof ShapedWrite ? write.statement() : write;
}
