import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { load } from 'js-yaml';

const ROOT = resolve(__dirname, '../..');

/**
 * `npm start` is `nest build` then `node dist/main.js`. nest-cli deletes dist before
 * each build; an incremental build whose .tsbuildinfo lives outside dist then believes
 * the (deleted) output is current and emits nothing, so a second `npm start` failed
 * with "Cannot find module dist/main.js". Built in a copy of the checkout, so this
 * test never touches the checkout's own dist.
 */
describe('npm run build', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'a2a-build-'));
    for (const file of ['package.json', 'tsconfig.json', 'tsconfig.build.json', 'nest-cli.json']) {
      cpSync(join(ROOT, file), join(dir, file));
    }
    cpSync(join(ROOT, 'src'), join(dir, 'src'), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const build = () =>
    execFileSync(process.execPath, [join(ROOT, 'node_modules/@nestjs/cli/bin/nest.js'), 'build'], {
      cwd: dir,
      stdio: 'pipe',
    });
  const entryPoints = () => ['main.js', 'worker.js', 'cli.js'].filter((file) => existsSync(join(dir, 'dist', file)));

  it('leaves dist/main.js after every build: twice in a row, and after dist was deleted', () => {
    build();
    expect(entryPoints()).toEqual(['main.js', 'worker.js', 'cli.js']);
    build();
    expect(entryPoints()).toEqual(['main.js', 'worker.js', 'cli.js']);
    rmSync(join(dir, 'dist'), { recursive: true, force: true });
    build();
    expect(entryPoints()).toEqual(['main.js', 'worker.js', 'cli.js']);
  }, 300_000);
});

describe('package.json', () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  const sources = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
    });

  it('lists only runtime dependencies that src/ imports, or that another dependency needs as a peer', () => {
    const code = sources(join(ROOT, 'src'))
      .map((file) => readFileSync(file, 'utf8'))
      .join('\n');
    const names = Object.keys(pkg.dependencies);
    const peers = new Set(
      names.flatMap((name) => {
        const manifest = join(ROOT, 'node_modules', name, 'package.json');
        return existsSync(manifest)
          ? Object.keys(JSON.parse(readFileSync(manifest, 'utf8')).peerDependencies ?? {})
          : [];
      }),
    );
    const escape = (name: string) => name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    const unused = names.filter((name) => {
      const imported = new RegExp(`(from |import |import\\(|require\\()'${escape(name)}(/[^']*)?'`).test(code);
      return !imported && !peers.has(name);
    });
    expect(unused).toEqual([]);
  });
});

/**
 * Node's runtime flags (docs/configuration.md): the service's processes run with a
 * 64 MB young generation — under load a default one is collected often enough to take
 * a sixth of a send's CPU (BENCHMARKS.md). Every way of starting them carries the same
 * flags: `npm start`, `npm run worker`, the Docker image (every process of it, through
 * NODE_OPTIONS), and `npm run bench`, whose servers run in the bench's own process.
 */
describe("Node's runtime flags", () => {
  const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> })
    .scripts;
  /** The flags a script gives `node` before its entry point or loader. */
  const nodeFlags = (script: string): string[] => {
    const words = script.split(/\s+/);
    expect(words[0]).toBe('node');
    const flags: string[] = [];
    for (const word of words.slice(1)) {
      if (!word.startsWith('--')) {
        break;
      }
      flags.push(word);
    }
    return flags;
  };
  const { NODE_OPTIONS: _, ...env } = process.env;
  const heapLimit = (flags: string[]) =>
    Number(
      execFileSync(process.execPath, [...flags, '-p', "require('v8').getHeapStatistics().heap_size_limit"], { env }),
    );

  it('npm start gives Node a young generation of 64 MB semi-spaces', () => {
    const flags = nodeFlags(scripts.start);
    expect(flags).toEqual(['--max-semi-space-size=64']);
    // V8 counts the young generation (three semi-spaces' worth) in the heap's limit: the
    // flag raises it from the default's (16 MB semi-spaces on a 64-bit machine) to 3 × 64 MB.
    const raised = heapLimit(flags) - heapLimit([]);
    expect(raised).toBeGreaterThan(0);
    expect(raised).toBeLessThanOrEqual(3 * 64 * 1024 * 1024);
  });

  it('the worker, the benchmarks and the Docker image run with the same flags', () => {
    const flags = nodeFlags(scripts.start);
    expect(nodeFlags(scripts.worker)).toEqual(flags);
    expect(nodeFlags(scripts.bench)).toEqual(flags);
    const dockerfile = readFileSync(join(ROOT, 'docker/Dockerfile'), 'utf8');
    expect(/^ENV NODE_OPTIONS=(.*)$/m.exec(dockerfile)?.[1]).toBe(flags.join(' '));
  });
});

/**
 * docker/compose.yaml and what the README says of it: one image for the server and the
 * worker (built once, named, so `docker run` outside compose can use it too), gRPC
 * published where the cards advertise it, every service named.
 */
describe('docker/compose.yaml', () => {
  type Service = { image?: string; build?: unknown; ports?: string[] };
  const compose = load(readFileSync(join(ROOT, 'docker/compose.yaml'), 'utf8')) as {
    services: Record<string, Service>;
  };
  const { app, worker } = compose.services;
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');

  it('builds one image, which the server and the worker both run', () => {
    expect(app.build).toBeDefined();
    expect(app.image).toMatch(/^[a-z0-9-]+$/);
    expect(worker.image).toBe(app.image);
    expect(worker.build).toBeUndefined();
    expect(Object.values(compose.services).filter((service) => service.build)).toHaveLength(1);
  });

  it("publishes the API and gRPC's port (GRPC_PORT's default, which the cards advertise)", () => {
    expect(app.ports).toEqual(expect.arrayContaining(['3000:3000', '50051:50051']));
  });

  it('the README builds the image it runs, and names every service compose starts', () => {
    expect(readme).toContain(`docker build -t ${app.image} -f docker/Dockerfile .`);
    expect(readme).toContain(`docker run --rm -v a2a-data:/data ${app.image} node dist/cli.js`);
    expect(readme).not.toMatch(/\bIMAGE\b/);
    const docker = /^Or with Docker:[\s\S]*?\n\n/m.exec(readme)?.[0] ?? '';
    expect(Object.keys(compose.services).sort()).toEqual([
      'app',
      'grafana',
      'postgres',
      'prometheus',
      'redis',
      'worker',
    ]);
    for (const name of ['server', 'worker', 'PostgreSQL', 'Redis', 'Prometheus', 'Grafana', ':50051']) {
      expect(docker).toContain(name);
    }
  });
});

/** A newcomer's first hour (docs/testing.md): `npm install`, `npm test`, nothing installed by hand. */
describe("README's Test it", () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = /^## Test it\n([\s\S]*?)\n## /m.exec(readme)?.[1] ?? '';

  it('is two commands, and asks for nothing to be installed by hand', () => {
    expect(/```text\n([\s\S]*?)```/.exec(section)?.[1]).toBe('npm install\nnpm test\n');
    expect(section).not.toMatch(/apt-get|brew |needs? a PostgreSQL server/);
  });

  it('CI runs the database and ledger suites on the run’s own PostgreSQL too', () => {
    expect(readFileSync(join(ROOT, '.ci/run'), 'utf8')).toMatch(
      /^TEST_DATABASE=embedded npx jest --ci( --[\w-]+)* test\/database test\/ledger( |$)/m,
    );
  });
});
