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
  statement: Sql;
  /** Called with the member's RETURNING rows once the batch has committed. */
  returned?: (rows: BatchRows) => void;
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
  write(statement: Sql, returned?: (rows: BatchRows) => void): void {
    if (this.committed) throw new Error('this batch has been sent; start another');
    this.members.push({ statement, returned });
    this.built = undefined;
  }

  /** Runs `hook` once the batch has committed (never when it fails). */
  afterCommit(hook: Hook): void {
    if (this.committed) throw new Error('this batch has been sent; start another');
    this.hooks.push(hook);
  }

  get isEmpty(): boolean {
    return this.members.length === 0;
  }

  private built?: Sql;

  /** The one statement: every member a CTE; the rows of those that asked for them, tagged by member. */
  statement(): Sql {
    this.built ??= batchStatement(this.members);
    return this.built;
  }

  /**
   * Several batches as one statement (their members one after the other), and how to
   * hand each batch its own rows of its result. They commit together or not at all:
   * members of different batches must not touch the same rows either.
   */
  static together(batches: readonly WriteBatch[]): {
    statement: Sql;
    split: (rows: ReadonlyArray<TaggedRow>) => TaggedRow[][];
  } {
    const firsts: number[] = [];
    const members: Member[] = [];
    for (const batch of batches) {
      firsts.push(members.length);
      members.push(...batch.members);
    }
    return {
      statement: batchStatement(members),
      split: (rows) => {
        const own: TaggedRow[][] = batches.map(() => []);
        for (const { member, row } of rows) {
          let b = firsts.length - 1;
          while (firsts[b] > member) b -= 1;
          own[b].push({ member: member - firsts[b], row });
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
      if (defer) defer(hook);
      else await hook();
    }
  }
}

/** `WITH w0 AS (…), … SELECT member, row FROM …`: the independent writes of one unit as one statement. */
export function batchStatement(members: ReadonlyArray<{ statement: Sql; returned?: unknown }>): Sql {
  if (members.length === 0) throw new Error('an empty batch has no statement');
  const ctes = sql.join(
    members.map((member, index) => sql`${sql.raw(`w${index}`)} AS (${member.statement})`),
    ',\n',
  );
  const reads = members.flatMap((member, index) =>
    member.returned ? [sql.raw(`SELECT ${index} AS member, to_jsonb(w${index}) AS row FROM w${index}`)] : [],
  );
  const select =
    reads.length > 0
      ? sql.join(reads, '\nUNION ALL\n')
      : sql.raw('SELECT NULL::int AS member, NULL::jsonb AS row WHERE false');
  return sql`WITH ${ctes}\n${select}`;
}
