import { sql } from './sql';

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

  it('raw text is spliced as is, without parameters', () => {
    const q = sql`SELECT ${sql.raw('k.id, k.scope')} FROM api_keys k WHERE k.id = ${'i'}`;
    expect(q.text).toBe('SELECT k.id, k.scope FROM api_keys k WHERE k.id = $1');
    expect(q.values).toEqual(['i']);
  });
});
