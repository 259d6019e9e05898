import { arrayLiteral, Sql, sql } from './sql';

describe('sql', () => {
  it('numbers interpolated values and keeps them out of the text', () => {
    const q = sql`SELECT * FROM t WHERE a = ${"x'; DROP TABLE t; --"} AND b = ${2}`;
    expect(q.text).toBe('SELECT * FROM t WHERE a = $1 AND b = $2');
    expect(q.values).toEqual(["x'; DROP TABLE t; --", 2]);
  });

  it('splices fragments and renumbers their parameters', () => {
    const scope = sql`k.scope = ${'agent'}`;
    const status = sql`k.status = ${'active'}`;
    const q = sql`SELECT 1 FROM api_keys k WHERE k.org = ${'o'} AND ${sql.join([scope, sql.empty, status], ' AND ')} LIMIT ${5}`;
    expect(q.text).toBe('SELECT 1 FROM api_keys k WHERE k.org = $1 AND k.scope = $2 AND k.status = $3 LIMIT $4');
    expect(q.values).toEqual(['o', 'agent', 'active', 5]);
  });

  it('where() drops empty conditions and is empty without any', () => {
    expect(sql.where([sql.empty]).isEmpty).toBe(true);
    const q = sql`SELECT 1 FROM t ${sql.where([sql.empty, sql`a = ${1}`])}`;
    expect(q.text).toBe('SELECT 1 FROM t WHERE a = $1');
  });

  it('plannedPerRun() marks every statement the fragment is spliced into, however deep', () => {
    const page = sql.plannedPerRun(sql.raw('ORDER BY t.created_at DESC LIMIT 51'));
    const branch = sql`SELECT * FROM t ${sql.where([sql`a = ${1}`])} ${page}`;
    expect(sql`SELECT * FROM ((${branch}) UNION ALL (${sql`SELECT * FROM u`})) t`.plannedPerRun).toBe(true);
    expect(sql.join([sql`a = ${1}`, page], ' ').plannedPerRun).toBe(true);
    expect(sql`SELECT * FROM t WHERE a = ${1} ${sql.raw('LIMIT 51')}`.plannedPerRun).toBe(false);
    expect(branch.text).toBe('SELECT * FROM t WHERE a = $1 ORDER BY t.created_at DESC LIMIT 51');
  });

  it('raw text is spliced as is, without parameters', () => {
    const q = sql`SELECT ${sql.raw('k.id, k.scope')} FROM api_keys k WHERE k.id = ${'i'}`;
    expect(q.text).toBe('SELECT k.id, k.scope FROM api_keys k WHERE k.id = $1');
    expect(q.values).toEqual(['i']);
  });

  it('rows(): a few rows as a VALUES list, more as unnest, both numbered by ord', () => {
    const columns = [
      ['id', 'uuid'],
      ['name', 'text'],
    ] as const;
    const two = sql`SELECT * FROM ${sql.rows('r', columns, [
      ['a', 'x'],
      ['b', 'y'],
    ])}`;
    expect(two.text).toBe(
      'SELECT * FROM (VALUES ($1::uuid, $2::text, 1::bigint), ($3::uuid, $4::text, 2::bigint)) AS r(id, name, ord)',
    );
    expect(two.values).toEqual(['a', 'x', 'b', 'y']);
    const many = sql`SELECT * FROM ${sql.rows(
      'r',
      columns,
      ['a', 'b', 'c', 'd', 'e'].map((id) => [id, id.toUpperCase()]),
    )}`;
    expect(many.text).toBe('SELECT * FROM unnest($1::uuid[], $2::text[]) WITH ORDINALITY AS r(id, name, ord)');
    expect(many.values).toEqual(['{"a","b","c","d","e"}', '{"A","B","C","D","E"}']);
    expect(sql`SELECT * FROM ${sql.rows('r', columns, [])}`.text).toContain('unnest(');
  });

  it('rows(): the same columns under another alias or count write their own text', () => {
    const columns = [
      ['id', 'uuid'],
      ['n', 'int'],
    ] as const;
    const one = sql.rows('a', columns, [['x', 1]]);
    const again = sql.rows('b', columns, [['y', 2]]);
    const two = sql.rows('a', columns, [
      ['x', 1],
      ['z', 3],
    ]);
    expect(sql`${one}`.text).toBe('(VALUES ($1::uuid, $2::int, 1::bigint)) AS a(id, n, ord)');
    expect(sql`${again}`.text).toBe('(VALUES ($1::uuid, $2::int, 1::bigint)) AS b(id, n, ord)');
    expect(sql`${two}`.values).toEqual(['x', 1, 'z', 3]);
    expect(sql`${sql.rows('a', columns, [['w', 4]])}`.values).toEqual(['w', 4]);
  });

  it('a fragment spliced twice, or into two statements, gets its parameters numbered in each place', () => {
    const near = sql`abs(x - ${5}) < ${1}`;
    const q = sql`SELECT 1 FROM t WHERE ${near} OR (${near} AND y = ${'y'})`;
    expect(q.text).toBe('SELECT 1 FROM t WHERE abs(x - $1) < $2 OR (abs(x - $3) < $4 AND y = $5)');
    expect(q.values).toEqual([5, 1, 5, 1, 'y']);
    expect(sql`SELECT ${near}`.text).toBe('SELECT abs(x - $1) < $2');
    expect(near.text).toBe('abs(x - $1) < $2');
  });

  it("the text written once for a shape of statement is that shape's: values and fragments in their places, each raw text its own", () => {
    const pick = (what: unknown, where: Sql) => sql`SELECT ${what} FROM t ${where} LIMIT ${10}`;
    const shapes: Array<[Sql, string]> = [
      [pick(sql.raw('a'), sql.where([sql`x = ${1}`])), 'SELECT a FROM t WHERE x = $1 LIMIT $2'],
      [pick(2, sql.where([sql`x = ${1}`])), 'SELECT $1 FROM t WHERE x = $2 LIMIT $3'],
      [pick(sql.raw('b'), sql.where([sql`x = ${1}`])), 'SELECT b FROM t WHERE x = $1 LIMIT $2'],
      [
        pick(sql.raw('a'), sql.where([sql`x = ${1}`, sql`y = ${2}`])),
        'SELECT a FROM t WHERE x = $1 AND y = $2 LIMIT $3',
      ],
      [
        pick(sql.raw('a'), sql.join([sql`x = ${1}`, sql`y = ${2}`], ' OR ')),
        'SELECT a FROM t x = $1 OR y = $2 LIMIT $3',
      ],
      [pick(sql.raw('a'), sql.empty), 'SELECT a FROM t  LIMIT $1'],
      [pick(sql`${3}`, sql.empty), 'SELECT $1 FROM t  LIMIT $2'],
    ];
    // Twice over, in another order the second time: each shape's text is found again, not another's.
    for (const [statement, text] of [...shapes, ...shapes.reverse()]) {
      expect(statement.text).toBe(text);
    }
    expect(pick(sql.raw('a'), sql.where([sql`x = ${1}`])).text).toBe('SELECT a FROM t WHERE x = $1 LIMIT $2');
    const pair = (first: unknown, second: unknown) => sql`SELECT ${first}, ${second}`;
    expect(pair(sql.raw('x'), 1).text).toBe('SELECT x, $1');
    expect(pair(1, sql.raw('x')).text).toBe('SELECT $1, x');
  });

  it('an Sql has one more literal text than parts', () => {
    expect(() => Sql.of(Object.freeze(['SELECT ', '']), [])).toThrow('one more literal text than parts');
  });

  it('a text from an array that is not frozen is written each time, from what the array holds then', () => {
    const strings = ['SELECT ', ' FROM t'];
    expect(Sql.of(strings, [1]).text).toBe('SELECT $1 FROM t');
    strings[1] = ' FROM u';
    expect(Sql.of(strings, [1]).text).toBe('SELECT $1 FROM u');
    expect(sql`WHERE ${Sql.of(strings, [2])}`.text).toBe('WHERE SELECT $1 FROM u');
  });

  it('arrayLiteral(): every element quoted, quotes and backslashes escaped, NULL for null, times in UTC', () => {
    expect(arrayLiteral(['plain', 'say "hi"', 'C:\\dir', null, undefined, '', 'a,b {c}', 7, true])).toBe(
      '{"plain","say \\"hi\\"","C:\\\\dir",NULL,NULL,"","a,b {c}","7","true"}',
    );
    expect(arrayLiteral([new Date(Date.UTC(2026, 10, 27, 5, 6, 7, 89)), { a: '"' }])).toBe(
      '{"2026-11-27T05:06:07.089Z","{\\"a\\":\\"\\\\\\"\\"}"}',
    );
    expect(arrayLiteral([])).toBe('{}');
    expect(arrayLiteral([new Date(NaN)])).toBe('{"invalid date"}'); // PostgreSQL refuses it as a time
  });

  it('arrayLiteral(): a text with quotes escapes only quotes and backslashes, whatever else it holds', () => {
    // Each way an element is quoted: nothing to escape; quotes and backslashes alone (JSON.stringify
    // quotes it); with a control character or a surrogate as well (JSON.stringify would escape a control character
    // or an unpaired surrogate too: every surrogate goes this way).
    const texts = [
      'ünïcödé ✓',
      '{"text":"say \\"hi\\"","path":"C:\\\\dir"}',
      'ünïcödé "✓" \u2028 \u007f',
      'line "one"\nline \\two\t\u0000',
      'emoji "😀" and a lone \ud800 "',
    ];
    const escape = (text: string) => `"${[...text].map((c) => (c === '"' || c === '\\' ? `\\${c}` : c)).join('')}"`;
    expect(arrayLiteral(texts)).toBe(`{${texts.map(escape).join(',')}}`);
    expect(arrayLiteral(['line "one"\nline two'])).toBe('{"line \\"one\\"\nline two"}');
  });
});
