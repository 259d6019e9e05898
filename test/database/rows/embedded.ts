import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PglitePool } from '../../../src/database/pglite-pool';
import { normalize, statement } from './fixture';

/** Runs the fixture's statement on a fresh embedded PGlite and prints the rows (PGlite needs a process of its own, outside Jest). */
async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'a2a-rows-'));
  const pool = new PglitePool({ dataDir });
  try {
    const found = await pool.query({ text: statement.text, values: [...statement.values] });
    process.stdout.write(JSON.stringify(normalize(found.rows as Array<Record<string, unknown>>)));
  } finally {
    await pool.end();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

void main();
