import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = join(__dirname, '..', '..');

/**
 * `npm run bench` loads TypeScript with bench/register.js: the service measured in the
 * bench's process must run as the shipped one does — without Node's `domain` module,
 * which ts-node loads (through Node's REPL) and which wraps every callback after it.
 */
describe('the benchmarks’ TypeScript loader', () => {
  const node = (code: string) =>
    run(process.execPath, ['-r', './bench/register.js', '-e', code], { cwd: root, timeout: 60_000 });

  it('loads the service’s TypeScript, decorators and all, and never loads domain', async () => {
    const { stdout } = await node(
      `require('reflect-metadata');
       const { AppModule } = require('./src/app.module.ts');
       const { percentile } = require('./bench/lib.ts');
       console.log(JSON.stringify({
         module: typeof AppModule.forRoot,
         percentile: percentile([1, 2, 3, 4], 50),
         domain: process.moduleLoadList.some((m) => m.includes('domain')),
       }));`,
    );
    expect(JSON.parse(stdout.trim().split('\n').pop()!)).toEqual({ module: 'function', percentile: 2, domain: false });
  });

  it('is what npm run bench runs: an unknown benchmark is refused by bench/run.ts', async () => {
    const failed = await run(process.execPath, ['-r', './bench/register.js', 'bench/run.ts', 'no-such-bench'], {
      cwd: root,
      timeout: 60_000,
    }).catch((error: { code: number; stderr: string }) => error);
    expect(failed).toMatchObject({ code: 2, stderr: expect.stringContaining('unknown benchmark(s): no-such-bench') });
    const { scripts } = require(join(root, 'package.json')) as { scripts: Record<string, string> };
    // After Node's runtime flags (test/platform/packaging: `npm start`'s).
    expect(scripts.bench).toMatch(/^node (--\S+ )*-r \.\/bench\/register\.js bench\/run\.ts$/);
  });
});
