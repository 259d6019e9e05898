import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * No module touches another module's tables. A table belongs to the module whose
 * folder holds its entity; every statement a repository sends is checked in under
 * src/database/queries/ (test/database/generated-sql), so this reads those files and
 * fails on a statement that names another module's table — unless its method is a
 * named read model: a doc comment that starts `Read model:` and says why the join is
 * kept (the list is in docs/data-access.md).
 */
const ROOT = join(__dirname, '../..');
const SRC = join(ROOT, 'src');

function files(dir: string, suffix: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      return files(path, suffix);
    }
    return entry.name.endsWith(suffix) ? [path] : [];
  });
}

/** The module (top folder of src/) of a file. */
const moduleOf = (path: string) => relative(SRC, path).split('/')[0];

/** table → owning module, from where each entity lives. */
function owners(): Map<string, string> {
  const map = new Map<string, string>();
  for (const path of files(SRC, '.entity.ts')) {
    const name = /@Entity\(\{\s*name:\s*'([a-z_]+)'/.exec(readFileSync(path, 'utf8'))?.[1];
    if (name) {
      map.set(name, moduleOf(path));
    }
  }
  return map;
}

/**
 * The read models: repository methods whose doc comment starts with `Read model:`, or
 * that build their statement from a fragment (a const or function) documented so.
 */
function readModels(): Set<string> {
  const named = new Set<string>();
  for (const path of files(SRC, '.repository.ts')) {
    const text = readFileSync(path, 'utf8');
    const owner = /export class (\w+Repository)/.exec(text)?.[1];
    const fragments = [...text.matchAll(/\/\*\*((?:(?!\*\/)[\s\S])*)\*\/\s*(?:const|function)\s+(\w+)/g)]
      .filter((m) => /^\s*\*?\s*Read model:/.test(m[1]))
      .map((m) => m[2]);
    const methods = [...text.matchAll(/\n {2}async (\w+)\(/g)];
    methods.forEach((match, i) => {
      const start = match.index!;
      const before = text.slice(i === 0 ? 0 : methods[i - 1].index!, start);
      const doc = before.lastIndexOf('/**') >= 0 ? before.slice(before.lastIndexOf('/**')) : '';
      const body = text.slice(start, i + 1 < methods.length ? methods[i + 1].index! : text.length);
      const usesFragment = fragments.some((name) => new RegExp(`\\b${name}\\b`).test(body));
      if (/^\/\*\*\s*\*?\s*Read model:/.test(doc) || usesFragment) {
        named.add(`${owner}.${match[1]}`);
      }
    });
  }
  return named;
}

describe('table ownership', () => {
  const tables = owners();
  const allowed = readModels();

  it('every table has an owning module', () => {
    expect(tables.size).toBeGreaterThan(20);
  });

  it("a repository's statements name only its module's tables, or are a named read model", () => {
    // A module holds one repository per table group; each one's SQL file is named after it.
    const moduleOfSql = new Map(
      files(SRC, '.repository.ts').map((path) => [path.split('/').pop()!.replace(/\.ts$/, '.sql'), moduleOf(path)]),
    );
    const offenders: string[] = [];
    for (const path of files(join(SRC, 'database/queries'), '.sql')) {
      const module = moduleOfSql.get(path.split('/').pop()!) ?? '(no repository)';
      const blocks = readFileSync(path, 'utf8').split(/\n(?=-- \w+Repository\.)/);
      for (const block of blocks) {
        const method = /^-- (\w+Repository\.\w+)/.exec(block)?.[1];
        if (!method) {
          continue;
        }
        const named = [...block.matchAll(/\b(?:FROM|JOIN|INTO|UPDATE)\s+([a-z_]+)/g)].map((m) => m[1]);
        const foreign = [...new Set(named.filter((table) => tables.has(table) && tables.get(table) !== module))];
        if (foreign.length > 0 && !allowed.has(method)) {
          offenders.push(`${method} (${module}) reads ${foreign.join(', ')}`);
        }
      }
    }
    expect(offenders).toEqual([]);
  });

  it('the read models are exactly the ones docs/data-access.md lists', () => {
    const listed = [
      ...readFileSync(join(ROOT, 'docs/data-access.md'), 'utf8').matchAll(/`(\w+Repository\.\w+)` \(read\s+model\)/g),
    ].map((m) => m[1]);
    expect(listed.sort()).toEqual([...allowed].sort());
  });
});
