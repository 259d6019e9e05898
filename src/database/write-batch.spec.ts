import { sql } from './sql';
import { batchStatement, WriteBatch } from './write-batch';

describe('WriteBatch', () => {
  it('makes each member a CTE, numbering the parameters across members', () => {
    const statement = batchStatement([
      { statement: sql`INSERT INTO a (x) VALUES (${1})` },
      { statement: sql`INSERT INTO b (y, z) VALUES (${'two'}, ${3}) RETURNING y`, returned: () => undefined },
    ]);
    expect(statement.text).toBe(
      'WITH w0 AS (INSERT INTO a (x) VALUES ($1)),\nw1 AS (INSERT INTO b (y, z) VALUES ($2, $3) RETURNING y)\n' +
        'SELECT 1 AS member, to_jsonb(w1) AS row FROM w1',
    );
    expect(statement.values).toEqual([1, 'two', 3]);
  });

  it('selects nothing when no member asked for its rows', () => {
    expect(batchStatement([{ statement: sql`DELETE FROM a` }]).text).toBe(
      'WITH w0 AS (DELETE FROM a)\nSELECT NULL::int AS member, NULL::jsonb AS row WHERE false',
    );
  });

  it('hands each member its own rows, then runs the after-commit hooks, in order', async () => {
    const batch = new WriteBatch();
    const seen: string[] = [];
    batch.write(sql`INSERT INTO a DEFAULT VALUES RETURNING 1`, (rows) => seen.push(`a:${rows.length}`));
    batch.write(sql`INSERT INTO b DEFAULT VALUES`);
    batch.write(sql`INSERT INTO c DEFAULT VALUES RETURNING 1`, (rows) => seen.push(`c:${JSON.stringify(rows)}`));
    batch.afterCommit(() => void seen.push('hook'));
    await batch.settle([
      { member: 2, row: { n: 1 } },
      { member: 0, row: {} },
      { member: 0, row: {} },
    ]);
    expect(seen).toEqual(['a:2', 'c:[{"n":1}]', 'hook']);
  });

  it('takes nothing more once sent', async () => {
    const batch = new WriteBatch();
    batch.write(sql`DELETE FROM a`);
    await batch.settle([]);
    expect(() => batch.write(sql`DELETE FROM b`)).toThrow(/sent/);
    expect(() => batch.afterCommit(() => undefined)).toThrow(/sent/);
  });

  it('together: several batches as one statement, each handed back its own rows', async () => {
    const one = new WriteBatch();
    const two = new WriteBatch();
    const seen: string[] = [];
    one.write(sql`INSERT INTO a (x) VALUES (${1}) RETURNING x`, (rows) => seen.push(`one:${JSON.stringify(rows)}`));
    two.write(sql`INSERT INTO b DEFAULT VALUES`);
    two.write(sql`INSERT INTO a (x) VALUES (${2}) RETURNING x`, (rows) => seen.push(`two:${JSON.stringify(rows)}`));
    const { statement, split } = WriteBatch.together([one, two]);
    expect(statement.text).toBe(
      'WITH w0 AS (INSERT INTO a (x) VALUES ($1) RETURNING x),\nw1 AS (INSERT INTO b DEFAULT VALUES),\n' +
        'w2 AS (INSERT INTO a (x) VALUES ($2) RETURNING x)\n' +
        'SELECT 0 AS member, to_jsonb(w0) AS row FROM w0\nUNION ALL\nSELECT 2 AS member, to_jsonb(w2) AS row FROM w2',
    );
    expect(statement.values).toEqual([1, 2]);
    const [ofOne, ofTwo] = split([
      { member: 2, row: { x: 2 } },
      { member: 0, row: { x: 1 } },
    ]);
    await one.settle(ofOne);
    await two.settle(ofTwo);
    expect(seen).toEqual(['one:[{"x":1}]', 'two:[{"x":2}]']);
  });
});
