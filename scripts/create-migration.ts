/**
 * `npm run migration:create -- <name>`: writes the next migration and lists it.
 *
 * The migrations are the schema's source of truth, written as SQL by hand (named
 * constraints and indexes, the invariants docs/api.md promises); TypeORM's migration:generate would
 * diff against entities that deliberately describe only columns
 * (test/database/schema.e2e-spec.ts), so it is not used. This creates
 * `src/database/migrations/<timestamp>-<name>.ts` with an empty up/down and appends
 * it to `migrations/index.ts`; write the SQL, update the entity's columns, run
 * `npx jest test/database` (the schema test holds entities to the migrations).
 *
 * `MIGRATIONS_DIR` points it elsewhere (the test uses a copy).
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export function createMigration(dir: string, name: string, now = Date.now()): string {
  if (!/^[a-z][a-z0-9]*(-[a-z0-9]+)*$/.test(name)) {
    throw new Error(`the name must be kebab-case, like "add-task-labels" (got "${name}")`);
  }
  const latest = Math.max(0, ...readdirSync(dir).map((file) => Number(/^(\d{13})-/.exec(file)?.[1] ?? 0)));
  const timestamp = Math.max(now, latest + 100000);
  const className = `${name
    .split('-')
    .map((word) => word[0].toUpperCase() + word.slice(1))
    .join('')}${timestamp}`;
  const file = `${timestamp}-${name}`;
  writeFileSync(
    join(dir, `${file}.ts`),
    `import type { MigrationInterface, QueryRunner } from 'typeorm';

/** TODO: what this changes and why (the issue, or the docs/api.md section). */
export class ${className} implements MigrationInterface {
  name = '${className}';

  async up(q: QueryRunner): Promise<void> {
    await q.query(\`\`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(\`\`);
  }
}
`,
  );
  const indexPath = join(dir, 'index.ts');
  const index = readFileSync(indexPath, 'utf8')
    .replace(/(\n)(\n\/\*\*)/, `\nimport { ${className} } from './${file}';$1$2`)
    .replace(/\n\];\s*$/, `\n  ${className},\n];\n`);
  if (!index.includes(`  ${className},\n];`)) {
    throw new Error(`could not append ${className} to ${indexPath}`);
  }
  writeFileSync(indexPath, index);
  return join(dir, `${file}.ts`);
}

if (require.main === module) {
  const name = process.argv[2];
  if (!name) {
    console.error('usage: npm run migration:create -- <kebab-case-name>');
    process.exit(2);
  }
  try {
    const path = createMigration(process.env.MIGRATIONS_DIR ?? join(__dirname, '../src/database/migrations'), name);
    console.log(`created ${path}; write its SQL, then update the entity and run: npx jest test/database`);
  } catch (error) {
    console.error((error as Error).message);
    process.exit(2);
  }
}
