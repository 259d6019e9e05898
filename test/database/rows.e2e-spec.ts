import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { createTestDatabase, dropDatabase, urlFor } from '../support/database';
import { expected, normalize, statement } from './rows/fixture';

const run = promisify(execFile);

/**
 * sql.rows past a few rows sends each column as one array literal of ours
 * (arrayLiteral): whatever a value holds, PostgreSQL — and the embedded PGlite —
 * must read back exactly the rows given.
 */
describe('sql.rows as arrays: what goes in comes back', () => {
  it('takes the unnest form here', () => {
    expect(statement.text).toContain('unnest(');
  });

  it('on PostgreSQL', async () => {
    const name = await createTestDatabase();
    const client = new Client({ connectionString: urlFor(name) });
    await client.connect();
    try {
      const found = await client.query({ text: statement.text, values: [...statement.values] });
      expect(normalize(found.rows)).toEqual(expected);
    } finally {
      await client.end();
      await dropDatabase(name);
    }
  });

  it('on the embedded PGlite', async () => {
    const { stdout } = await run(process.execPath, ['-r', './bench/register.js', 'test/database/rows/embedded.ts'], {
      env: { PATH: process.env.PATH },
      timeout: 60_000,
    });
    expect(JSON.parse(stdout)).toEqual(expected);
  });
});
