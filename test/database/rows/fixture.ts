import { sql } from '../../../src/database/sql';

/** Rows whose values hold what an array literal must escape; see ../rows.e2e-spec.ts. */
const columns = [
  ['id', 'uuid'],
  ['body', 'text'],
  ['doc', 'jsonb'],
  ['at', 'timestamptz'],
  ['n', 'int'],
] as const;
const rows = [
  [
    '00000000-0000-4000-8000-000000000001',
    'plain',
    '{"kind":"text","text":"say \\"hi\\""}',
    new Date('2026-11-27T05:06:07.089Z'),
    1,
  ],
  [
    '00000000-0000-4000-8000-000000000002',
    'back\\slash and "quotes"',
    '[1, "\\\\", null]',
    new Date('1999-12-31T23:59:59.999Z'),
    -2,
  ],
  ['00000000-0000-4000-8000-000000000003', '', null, null, null],
  ['00000000-0000-4000-8000-000000000004', 'a,b {c} NULL', '"NULL"', new Date(0), 0],
  ['00000000-0000-4000-8000-000000000005', 'ünïcödé ✓ \t tab', '{}', new Date('2026-01-01T00:00:00Z'), 2147483647],
  ['00000000-0000-4000-8000-000000000006', 'NULL', '[]', new Date('2026-06-30T12:00:00.5Z'), 6],
  ['00000000-0000-4000-8000-000000000007', '  spaces around  ', '" padded "', new Date('2026-02-28T23:59:59Z'), 7],
  [
    '00000000-0000-4000-8000-000000000008',
    'line "one"\nline \\two\r\t"',
    '{"text":"emoji 😀 and \\"quotes\\"\\n","sep":"\u2028"}',
    new Date('2026-03-01T00:00:00Z'),
    8,
  ],
  [
    '00000000-0000-4000-8000-000000000009',
    '"ünïcödé" \u007f \u2028 \\',
    '{"a":"\\\\\\"","sep":"\u2028"}',
    new Date(1),
    9,
  ],
];
export const statement = sql`SELECT r.id, r.body, r.doc, r.at, r.n, r.ord::int AS ord FROM ${sql.rows('r', columns, rows)} ORDER BY r.ord`;
export const expected = rows.map(([id, body, doc, at, n], i) => ({
  id,
  body,
  doc: doc === null ? null : JSON.parse(doc as string),
  at: at === null ? null : (at as Date).toISOString(),
  n,
  ord: i + 1,
}));
export const normalize = (found: Array<Record<string, unknown>>) =>
  found.map((row) => ({ ...row, at: row.at === null ? null : new Date(row.at as string).toISOString() }));
