import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { preProcessFile } from 'typescript';

/**
 * The folders of src/ form layers (docs/architecture.md, "Layers"): imports between
 * them never go round in a loop, and the foundation (config/, database/, common/)
 * imports no feature folder. Every import counts: `import type`, `export … from`,
 * `import('…')` in a type, `require`. Unit specs (`*.spec.ts`) are tests, not layers,
 * and may import across. The files at the top of src/ (main.ts, app.module.ts, …) are
 * the composition root: they may import anything, and nothing imports them.
 */
const SRC = resolve(__dirname, '../../src');
const ROOT = '(src root)';
const FOUNDATION = new Set(['config', 'tracing', 'database', 'common']);

/**
 * Imports known to close a loop, left out of the loop check while they are cut; empty,
 * and a test below fails on an entry that no longer closes one. A lower folder that
 * needs a higher one's repository declares a port that the higher one's repository
 * implements and the composition root binds (docs/architecture.md, "Layers").
 */
const PENDING = new Set<string>([]);

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      return sources(path);
    }
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

/** The top-level folder of src/ that a path is in; ROOT for src/'s own files; null outside src/. */
function folderOf(path: string): string | null {
  const parts = relative(SRC, path).split(sep);
  if (parts[0] === '..') {
    return null;
  }
  return parts.length > 1 ? parts[0] : ROOT;
}

/** "from → to" → the files of `from` that import `to`. */
function folderEdges(): Map<string, Map<string, string[]>> {
  const edges = new Map<string, Map<string, string[]>>();
  for (const file of sources(SRC)) {
    const from = folderOf(file)!;
    const { importedFiles } = preProcessFile(readFileSync(file, 'utf8'), true, true);
    for (const { fileName } of importedFiles) {
      if (!fileName.startsWith('.')) {
        continue;
      } // a package
      const to = folderOf(resolve(dirname(file), fileName));
      if (to === null || to === from) {
        continue;
      }
      const targets = edges.get(from) ?? edges.set(from, new Map()).get(from)!;
      const files = targets.get(to) ?? targets.set(to, []).get(to)!;
      const name = relative(SRC, file);
      if (!files.includes(name)) {
        files.push(name);
      }
    }
  }
  return edges;
}

function fileList(files: string[]): string {
  return files.length > 3 ? `${files.slice(0, 3).join(', ')} and ${files.length - 3} more` : files.join(', ');
}

/** The strongly connected components with more than one folder (Tarjan): each is an import loop. */
function loops(edges: Map<string, Map<string, string[]>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    for (const next of edges.get(node)?.keys() ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (stack.includes(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        component.push(member);
      } while (member !== node);
      if (component.length > 1) {
        found.push(component.sort());
      }
    }
  };
  for (const node of edges.keys()) {
    if (!index.has(node)) {
      visit(node);
    }
  }
  return found;
}

/** In one loop, the shortest cycle through each of its folders (BFS): "a → b → a", with the files of each step. */
function cycles(edges: Map<string, Map<string, string[]>>, members: string[]): string[] {
  const found = new Map<string, string>();
  for (const start of members) {
    const previous = new Map<string, string>();
    const queue = [start];
    while (queue.length > 0 && !previous.has(start)) {
      const node = queue.shift()!;
      for (const next of edges.get(node)?.keys() ?? []) {
        if (!members.includes(next) || previous.has(next)) {
          continue;
        }
        previous.set(next, node);
        queue.push(next);
      }
    }
    const path = [start];
    for (let node = previous.get(start)!; node !== start; node = previous.get(node)!) {
      path.unshift(node);
    }
    path.unshift(start);
    // One key per cycle, whichever folder it was found from.
    const ring = path.slice(1);
    const first = ring.indexOf([...ring].sort()[0]);
    const key = [...ring.slice(first), ...ring.slice(0, first)].join(' → ');
    const steps = path.slice(1).map((to, i) => `${path[i]} → ${to} (${fileList(edges.get(path[i])!.get(to)!)})`);
    found.set(key, steps.join('; '));
  }
  return [...found.values()];
}

describe('src/ folders are layers', () => {
  const edges = folderEdges();

  it('finds the imports it checks', () => {
    expect(edges.get('keys')?.get('common')?.length).toBeGreaterThan(0);
  });

  /** The graph without the pending imports, except `keep`. */
  const withoutPending = (keep?: string) =>
    new Map(
      [...edges].map(([from, targets]) => [
        from,
        new Map([...targets].filter(([to]) => `${from} → ${to}` === keep || !PENDING.has(`${from} → ${to}`))),
      ]),
    );

  it('no folder import loops', () => {
    const checked = withoutPending();
    const found = loops(checked).map((members) => ({ loop: members, cycles: cycles(checked, members) }));
    expect(found).toEqual([]);
  });

  it('the pending list names only imports that still exist and still close a loop', () => {
    const stale = [...PENDING].filter((edge) => {
      const [from, to] = edge.split(' → ');
      return !edges.get(from)?.has(to) || loops(withoutPending(edge)).length === 0;
    });
    expect(stale).toEqual([]);
  });

  it('config/, database/ and common/ import only each other', () => {
    const offenders = [...FOUNDATION].flatMap((from) =>
      [...(edges.get(from) ?? new Map<string, string[]>())]
        .filter(([to]) => !FOUNDATION.has(to))
        .map(([to, files]) => `${from} → ${to}: ${fileList(files)}`),
    );
    expect(offenders).toEqual([]);
  });

  it('nothing imports the composition root (src/*.ts)', () => {
    const offenders = [...edges].flatMap(([from, targets]) =>
      targets.has(ROOT) ? [`${from} → ${ROOT}: ${fileList(targets.get(ROOT)!)}`] : [],
    );
    expect(offenders).toEqual([]);
  });
});

/**
 * Inside the folders, files form layers too: no two files import each other in a
 * circle (directly or round several files; `import type` counts), and no file
 * imports one above it: controllers → services → repositories, and a repository
 * imports no service, controller or view (views are made at the edge; a type both
 * need lives in the records file below them). Unit specs are left out, as above.
 */
function fileEdges(): Map<string, string[]> {
  const edges = new Map<string, string[]>();
  for (const file of sources(SRC)) {
    const { importedFiles } = preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets = importedFiles
      .filter(({ fileName }) => fileName.startsWith('.'))
      .map(({ fileName }) => resolve(dirname(file), fileName))
      .map((base) => [`${base}.ts`, join(base, 'index.ts')].find((path) => existsSync(path)))
      .filter((path): path is string => path !== undefined && relative(SRC, path).split(sep)[0] !== '..')
      .map((path) => relative(SRC, path));
    edges.set(relative(SRC, file), [...new Set(targets)]);
  }
  return edges;
}

/** The files' circles (Tarjan's strongly connected components of more than one file). */
function fileCircles(edges: Map<string, string[]>): string[][] {
  const asFolders = new Map([...edges].map(([from, to]) => [from, new Map(to.map((file) => [file, [from]]))]));
  return loops(asFolders);
}

/** Higher is further from the data: a file may import only files of its rank or below. */
function rankOf(file: string): number {
  if (/\.controller\.ts$/.test(file)) {
    return 3;
  }
  if (/\.service\.ts$/.test(file)) {
    return 2;
  }
  if (/\.repository\.ts$/.test(file)) {
    return 1;
  }
  return 0;
}
const isView = (file: string) => /\.view\.ts$/.test(file);

describe('src/ files are layers', () => {
  const edges = fileEdges();

  it('finds the imports it checks', () => {
    expect(edges.get('ledger/ledger.service.ts')).toContain('ledger/task-records.ts');
    expect(
      fileCircles(
        new Map([
          ['a', ['b']],
          ['b', ['c']],
          ['c', ['a']],
          ['d', ['a']],
        ]),
      ),
    ).toEqual([['a', 'b', 'c']]);
  });

  it('no file import circles', () => {
    const found = fileCircles(edges).map((members) =>
      members.map(
        (file) =>
          `${file} → ${edges
            .get(file)!
            .filter((to) => members.includes(to))
            .join(', ')}`,
      ),
    );
    expect(found).toEqual([]);
  });

  it('no file imports a layer above it (controller → service → repository)', () => {
    const offenders = [...edges].flatMap(([from, targets]) =>
      targets
        .filter((to) => rankOf(to) > rankOf(from) && rankOf(from) > 0)
        .concat(rankOf(from) === 1 ? targets.filter(isView) : [])
        .map((to) => `${from} → ${to}`),
    );
    expect(offenders).toEqual([]);
  });

  it('view files are named one way: *.view.ts', () => {
    expect([...edges.keys()].filter((file) => /[.-]views?\.ts$/.test(file) && !isView(file))).toEqual([]);
  });

  it("a row's shape stays in the repositories: services see records (docs/data-access.md)", () => {
    const isRows = (file: string) => /-rows\.ts$/.test(file);
    const holdsRows = (file: string) => rankOf(file) === 1 || isRows(file) || file.startsWith(`database${sep}`);
    const rowTypes = [...edges.keys()].filter(
      (file) => !holdsRows(file) && /\b(RowOf|JsonRow)</.test(readFileSync(join(SRC, file), 'utf8')),
    );
    const rowImports = [...edges].flatMap(([from, targets]) =>
      holdsRows(from) && !from.startsWith(`database${sep}`)
        ? []
        : targets.filter(isRows).map((to) => `${from} → ${to}`),
    );
    expect(edges.get(`ledger${sep}task-reads.repository.ts`)).toContain(`ledger${sep}task-rows.ts`);
    expect([...rowTypes, ...rowImports]).toEqual([]);
  });
});
