import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { createMigration } from '../../scripts/create-migration';
import { dropDatabase, urlFor, withServer } from '../support/database';

/** `npm run migration:create` (docs/configuration.md, "Migrations") makes a migration that runs after the others. */
const ROOT = join(__dirname, '../..');

describe('npm run migration:create', () => {
  // Inside the checkout (so the copy's imports resolve), outside node_modules (so Jest compiles it).
  const dir = join(ROOT, 'dist/.test', `migrations-${randomBytes(4).toString('hex')}`);
  const database = `a2a_mig_${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    mkdirSync(dir, { recursive: true });
    cpSync(join(ROOT, 'src/database/migrations'), dir, { recursive: true });
    await withServer((c) => c.query(`CREATE DATABASE "${database}"`));
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await dropDatabase(database);
  });

  it('writes the next migration, lists it last, and it runs after the existing ones', async () => {
    const path = createMigration(dir, 'add-example-table');
    writeFileSync(
      path,
      readFileSync(path, 'utf8').replace('q.query(``)', 'q.query(`CREATE TABLE example_table (id int PRIMARY KEY)`)'),
    );
    const { MIGRATIONS } = require(join(dir, 'index.ts')) as { MIGRATIONS: Array<{ name: string }> };
    expect(MIGRATIONS[MIGRATIONS.length - 1].name).toMatch(/^AddExampleTable\d{13}$/);

    const dataSource = await new DataSource({
      type: 'postgres',
      url: urlFor(database),
      migrations: MIGRATIONS as never[],
      migrationsTableName: 'schema_migrations',
    }).initialize();
    try {
      const applied = await dataSource.runMigrations({ transaction: 'each' });
      expect(applied[applied.length - 1].name).toMatch(/^AddExampleTable/);
    } finally {
      await dataSource.destroy();
    }
    const client = new Client({ connectionString: urlFor(database) });
    await client.connect();
    const { rows } = await client.query(`SELECT to_regclass('example_table') AS t`);
    await client.end();
    expect(rows[0].t).toBe('example_table');
  });

  it('refuses a name that is not kebab-case, and writes nothing', () => {
    const run = spawnSync(
      process.execPath,
      ['-r', 'ts-node/register/transpile-only', 'scripts/create-migration.ts', 'Bad_Name'],
      {
        cwd: ROOT,
        env: { ...process.env, MIGRATIONS_DIR: dir },
        encoding: 'utf8',
      },
    );
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/kebab-case/);
    expect(readFileSync(join(dir, 'index.ts'), 'utf8')).not.toMatch(/Bad/);
  });
});
