import { sql } from './sql';
import { batchStatement, WriteBatch, WriteShape } from './write-batch';

describe('WriteBatch', () => {
  it('makes each member a CTE, numbering the parameters across members', () => {
    const statement = batchStatement([
      { write: sql`INSERT INTO a (x) VALUES (${1})` },
      { write: sql`INSERT INTO b (y, z) VALUES (${'two'}, ${3}) RETURNING y`, returned: () => undefined },
    ]);
    expect(statement.text).toBe(
      'WITH w0 AS (INSERT INTO a (x) VALUES ($1)),\nw1 AS (INSERT INTO b (y, z) VALUES ($2, $3) RETURNING y)\n' +
        'SELECT 1 AS member, to_jsonb(w1) AS row FROM w1',
    );
    expect(statement.values).toEqual([1, 'two', 3]);
  });

  it('selects nothing when no member asked for its rows', () => {
    expect(batchStatement([{ write: sql`DELETE FROM a` }]).text).toBe(
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

  describe('WriteShape', () => {
    const notes = new WriteShape(
      {
        n: [
          ['id', 'uuid'],
          ['body', 'text'],
        ],
      },
      ({ n }) => sql`INSERT INTO notes (id, body) SELECT n.id, n.body FROM ${n} RETURNING id`,
      { returned: 'id', set: 'n', column: 'id' },
    );
    const marks = new WriteShape({ m: [['at', 'int']] }, ({ m }) => sql`INSERT INTO marks (at) SELECT m.at FROM ${m}`);
    const A = '0000000a-0000-4000-8000-000000000000';
    const B = '0000000b-0000-4000-8000-000000000000';
    const C = '0000000c-0000-4000-8000-000000000000';

    it('routes only by a column its rows have', () => {
      expect(
        () =>
          new WriteShape({ n: [['id', 'uuid']] }, ({ n }) => sql`INSERT INTO notes (id) SELECT n.id FROM ${n}`, {
            returned: 'id',
            set: 'n',
            column: 'key',
          }),
      ).toThrow(/n\.key/);
    });

    it('alone, its statement over its rows', () => {
      const batch = new WriteBatch();
      batch.write(marks.of({ m: [[1]] }));
      expect(batch.statement().text).toBe(
        'WITH w0 AS (INSERT INTO marks (at) SELECT m.at FROM (VALUES ($1::int, 1::bigint)) AS m(at, ord))\n' +
          'SELECT NULL::int AS member, NULL::jsonb AS row WHERE false',
      );
    });

    it("a batch's kind: its members' texts, a shape by itself whatever its rows", () => {
      const kindOf = (...writes: Array<ReturnType<typeof marks.of> | ReturnType<typeof sql>>) => {
        const batch = new WriteBatch();
        for (const write of writes) {
          batch.write(write);
        }
        return batch.kind();
      };
      expect(kindOf(marks.of({ m: [[1]] }), sql`DELETE FROM a`)).toBe(
        kindOf(marks.of({ m: [[2], [3]] }), sql`DELETE FROM a`),
      );
      expect(kindOf(marks.of({ m: [[1]] }))).not.toBe(kindOf(notes.of({ n: [[A, 'x']] })));
      expect(kindOf(sql`DELETE FROM a`)).not.toBe(kindOf(sql`DELETE FROM b`));
    });

    it('together: the members of one shape are one member over all their rows, each batch handed back its own', async () => {
      const batches = [A, B, C].map(() => new WriteBatch());
      const seen: string[] = [];
      batches.forEach((batch, i) => {
        batch.write(marks.of({ m: [[i]] }));
        batch.write(sql`UPDATE counters SET n = n + ${i}`);
        batch.write(notes.of({ n: [[[A, B, C][i], `note ${i}`]] }), (rows) =>
          seen.push(`${i}:${JSON.stringify(rows)}`),
        );
      });
      const { statement, split } = WriteBatch.together(batches);
      expect(statement.text.match(/INSERT INTO marks/g)).toHaveLength(1);
      expect(statement.text.match(/INSERT INTO notes/g)).toHaveLength(1);
      expect(statement.text.match(/UPDATE counters/g)).toHaveLength(3);
      expect(statement.text.split('\n')[0]).toBe(
        'WITH w0 AS (INSERT INTO marks (at) SELECT m.at FROM (VALUES ($1::int, 1::bigint), ($2::int, 2::bigint), ($3::int, 3::bigint)) AS m(at, ord)),',
      );
      // Past four rows a shape's text no longer depends on how many went together.
      const many = Array.from({ length: 5 }, (_, i) => {
        const batch = new WriteBatch();
        batch.write(marks.of({ m: [[i]] }));
        return batch;
      });
      const five = WriteBatch.together(many).statement;
      expect(five.text).toBe(WriteBatch.together([...many, ...many.slice(0, 1)]).statement.text);
      expect(five.values).toEqual(['{"0","1","2","3","4"}']);

      // The merged notes are w2 (after the marks and the first batch's UPDATE); their rows go back by their id, in any case.
      const parts = split([
        { member: 2, row: { id: C.toUpperCase() } },
        { member: 2, row: { id: A } },
        { member: 2, row: { id: B } },
      ]);
      await Promise.all(batches.map((batch, i) => batch.settle(parts[i])));
      expect(seen).toEqual([`0:[{"id":"${A}"}]`, `1:[{"id":"${B}"}]`, `2:[{"id":"${C.toUpperCase()}"}]`]);
    });

    it('together: a route key of another batch keeps a member apart, as does a shape without a route whose rows are wanted', () => {
      const one = new WriteBatch();
      const two = new WriteBatch();
      one.write(notes.of({ n: [[A, 'first']] }), () => undefined);
      two.write(notes.of({ n: [[A, 'again']] }), () => undefined);
      one.write(marks.of({ m: [[1]] }), () => undefined);
      two.write(marks.of({ m: [[2]] }), () => undefined);
      const { statement, split } = WriteBatch.together([one, two]);
      expect(statement.text.match(/INSERT INTO notes/g)).toHaveLength(2);
      expect(statement.text.match(/INSERT INTO marks/g)).toHaveLength(2);
      expect(split([{ member: 2, row: { id: A } }])).toEqual([[], [{ member: 0, row: { id: A } }]]);
    });

    it('a merged row that names no batch is an error, not a row handed to the wrong one', () => {
      const batches = [A, B].map((id) => {
        const batch = new WriteBatch();
        batch.write(notes.of({ n: [[id, 'x']] }), () => undefined);
        return batch;
      });
      const { split } = WriteBatch.together(batches);
      expect(() => split([{ member: 0, row: { id: C } }])).toThrow(/unknown id/);
    });
  });
});
