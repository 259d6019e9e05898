import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * Every statement lives in a repository (`src/<module>/*.repository.ts`) or in the
 * database layer (`src/database/`: migrations, the Database itself). Anywhere else
 * in src/, SQL text, a raw `.query(` call, a QueryBuilder or a TypeORM Repository
 * fails this test: a newcomer finds every table's SQL in its module's repository.
 */
const ROOT = join(__dirname, '../..');

const SQL_TEXT =
  /\b(SELECT\s[\s\S]{0,400}?\bFROM\s|INSERT\s+INTO\s|UPDATE\s+[a-z_]+\s+(\w+\s+)?SET\s|DELETE\s+FROM\s|ON\s+CONFLICT\b|pg_notify\(|LISTEN\s|NOTIFY\s)/;
const DATA_ACCESS = /\.query\(|createQueryBuilder|getRepository\(|\.prepared\(/;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      return sources(path);
    }
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

/** The file's code without comments, so prose about SQL does not count. */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:])\/\/.*$/gm, '$1');
}

describe('SQL lives in repositories', () => {
  const files = sources(join(ROOT, 'src'))
    .map((path) => relative(ROOT, path))
    .filter((path) => !path.startsWith('src/database/') && !path.endsWith('.repository.ts'));

  it('no SQL and no raw data access outside repositories and src/database', () => {
    const offenders = files.filter((path) => {
      const text = code(readFileSync(join(ROOT, path), 'utf8'));
      return SQL_TEXT.test(text) || DATA_ACCESS.test(text);
    });
    expect(offenders).toEqual([]);
  });
});
