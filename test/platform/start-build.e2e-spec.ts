import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { buildReason, INPUTS, OUTPUTS, writeStamp } from '../../scripts/build-if-changed';

const ROOT = resolve(__dirname, '../..');
const SCRIPT = join(ROOT, 'scripts/build-if-changed.js');

/** The TypeScript files under `dir` (node_modules aside). */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      return entry.name === 'node_modules' ? [] : sources(path);
    }
    return /\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

/**
 * `npm start` builds only when the build's inputs changed since dist/ was made
 * (scripts/build-if-changed.js, its prestart): a second start of the same checkout
 * starts at once, and any edit to what the build reads rebuilds. Checked on a small
 * stand-in checkout, so no real build runs.
 */
describe('npm start: build only what changed', () => {
  let dir: string;
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  };
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'a2a-start-'));
    write('src/main.ts', 'console.log(1);\n');
    write('src/config/config.ts', 'export {};\n');
    write('console/src/App.tsx', 'export {};\n');
    write('client/index.ts', 'export {};\n');
    for (const file of ['tsconfig.json', 'tsconfig.build.json', 'nest-cli.json', 'package.json', 'package-lock.json']) {
      write(file, '{}\n');
    }
    for (const file of OUTPUTS) {
      write(file, 'built\n');
    }
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('reads the sources of both builds, their settings and the dependencies', () => {
    expect(INPUTS).toEqual(
      expect.arrayContaining(['src', 'console', 'client', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json']),
    );
    expect(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts).toMatchObject({
      prestart: 'node scripts/build-if-changed.js',
      build: 'nest build && npm run build:console',
      dev: 'nest start --watch',
    });
  });

  it('hashes every file the built sources import by a relative path', () => {
    const outside = new Set<string>();
    for (const file of [...sources(join(ROOT, 'src')), ...sources(join(ROOT, 'console'))]) {
      if (file.endsWith('.spec.ts')) {
        continue;
      }
      for (const [, target] of readFileSync(file, 'utf8').matchAll(
        /(?:from|import\(|require\()\s*'(\.{1,2}\/[^']*)'/g,
      )) {
        const top = relative(ROOT, resolve(dirname(file), target)).split('/')[0];
        if (!INPUTS.includes(top)) {
          outside.add(`${relative(ROOT, file)}: ${target}`);
        }
      }
    }
    expect([...outside]).toEqual([]);
  });

  it('builds a checkout that was never built, or whose dist lacks an entry point', () => {
    expect(buildReason(dir)).toBe('dist/ has no record of its inputs');
    writeStamp(dir);
    expect(buildReason(dir)).toBeNull();
    rmSync(join(dir, 'dist/console-app/index.html'));
    expect(buildReason(dir)).toBe('dist/console-app/index.html is missing');
  });

  it.each([
    ['a changed server source', () => write('src/config/config.ts', 'export const x = 1;\n')],
    ['a new server source', () => write('src/new.ts', 'export {};\n')],
    ['a deleted server source', () => rmSync(join(dir, 'src/config/config.ts'))],
    ['a changed Console source', () => write('console/src/App.tsx', 'export const y = 2;\n')],
    ['a changed client', () => write('client/index.ts', 'export const z = 3;\n')],
    ['changed compiler settings', () => write('tsconfig.json', '{"compilerOptions":{}}\n')],
    ['changed dependencies', () => write('package-lock.json', '{"lockfileVersion":3}\n')],
  ])('rebuilds after %s', (_, change) => {
    writeStamp(dir);
    change();
    expect(buildReason(dir)).toBe('the sources changed since the last build');
  });

  it('does not rebuild for what the build does not read', () => {
    writeStamp(dir);
    write('README.md', '# changed\n');
    write('test/x.e2e-spec.ts', 'export {};\n');
    write('data/pglite/file', 'x');
    write('src/node_modules/x.js', 'x');
    expect(buildReason(dir)).toBeNull();
  });

  it('the prestart script starts at once from a current build, without running one', () => {
    writeStamp(dir);
    // The stand-in checkout has no node_modules: a build would fail.
    const out = execFileSync(process.execPath, [SCRIPT], { cwd: dir, encoding: 'utf8' });
    expect(out).toBe('dist/ is current (no source changed since it was built): skipping the build\n');
  });
});
