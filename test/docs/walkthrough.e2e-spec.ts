import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createTestDatabase, dropDatabase, urlFor } from '../support/database';
import { startServerProcess, type ServerProcess } from '../support/server-process';
import { NO_CURL, walkthroughPath, which } from '../support/walkthrough-tools';

const WALKTHROUGH = resolve(__dirname, '../../docs/walkthrough.md');
const WALKTHROUGH_BASE = 'BASE=http://localhost:3000';

/**
 * docs/walkthrough.md's ```sh blocks are a walk-through a reader pastes, in order, into one bash
 * shell against a running server. This test does exactly that, against a server process
 * on a fresh database, with the convention stated at the top of the walk-through:
 *
 * - every HTTP request must answer 2xx (curl fails on a connection error too);
 * - a request expected to answer something else is one `curl …` line ending with a
 *   comment `# → NNN`: it must answer exactly NNN;
 * - the shell runs with `set -euo pipefail`, so an unset variable or a failing command
 *   stops the walk-through.
 *
 * `curl` is wrapped by a shell function that records each answer's status (with
 * `-D`, so blocks should not use `-D` themselves; `-i` and `-w` are fine).
 */
export function walkthroughScript(markdown: string): string {
  // Lines outside ```sh blocks become blank lines, so the script's line numbers are the page's.
  let inBlock = false;
  let blocks = 0;
  const lines = markdown.split('\n').map((line, index) => {
    if (!inBlock) {
      inBlock = line === '```sh';
      if (inBlock) {
        blocks += 1;
      }
      return '';
    }
    if (line.startsWith('```')) {
      inBlock = false;
      return '';
    }
    const announced = /^(?!\s*#).*#\s*→\s*(\d{3})\b/.exec(line);
    if (!announced) {
      return line;
    }
    if (!/^\s*curl\s/.test(line)) {
      throw new Error(
        `docs/walkthrough.md line ${index + 1}: "# → ${announced[1]}" must end a one-line \`curl …\` command: ${line}`,
      );
    }
    return line.replace(/^(\s*)curl\s/, `$1A2A_EXPECT=${announced[1]} curl `);
  });
  if (blocks === 0) {
    throw new Error('docs/walkthrough.md has no ```sh blocks');
  }
  return lines.join('\n');
}

/** Replaces the script's first line (the page's title): the shell options and the curl wrapper, on one line. */
const PRELUDE = [
  'set -euo pipefail',
  'curl() { local headers status rc=0 expected=${A2A_EXPECT:-2xx}',
  'headers=$(mktemp)',
  'command curl -D "$headers" "$@" || rc=$?',
  "status=$(tr -d '\\r' < \"$headers\" | awk '/^HTTP\\//{s=$2} END{print s}')",
  'rm -f "$headers"',
  // A stream the reader ends with --max-time (exit 28) after a 2xx answer succeeded.
  'if [ "$expected" = 2xx ]; then { [ "$rc" -eq 0 ] || [ "$rc" -eq 28 ]; } && [[ "$status" == 2?? ]] && return 0; else [ "$status" = "$expected" ] && return 0; fi',
  'echo "docs/walkthrough.md line ${BASH_LINENO[0]}: got ${status:-no answer} (curl exit $rc), expected $expected: curl $*" | tee -a "$A2A_FAILURES" >&2',
  'return 1; }',
].join('; ');

describe('the walk-through (docs/walkthrough.md)', () => {
  let database: string;
  let server: ServerProcess | undefined;
  let workDir: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    workDir = mkdtempSync(join(tmpdir(), 'a2a-walkthrough-'));
    server = await startServerProcess({ DATABASE_URL: urlFor(database) });
  });
  afterAll(async () => {
    await server?.stop();
    await dropDatabase(database);
    rmSync(workDir, { recursive: true, force: true });
  });

  it('announces every expected failure, and only on one-line curl commands', () => {
    expect(walkthroughScript('text\n```sh\ncurl -s $BASE/x    # → 401 problem+json\n# → 201 {"id":…}\n```\n')).toBe(
      '\n\nA2A_EXPECT=401 curl -s $BASE/x    # → 401 problem+json\n# → 201 {"id":…}\n\n',
    );
    expect(() => walkthroughScript('```sh\nX=$(curl -s $BASE/x)   # → 409\n```\n')).toThrow(
      /one-line `curl …` command/,
    );
  });

  it('brings a jq when the system has none (jq-wasm), and says in one line how to get curl', () => {
    // A PATH of nothing but a curl: no jq on it.
    const only = join(workDir, 'only-curl');
    mkdirSync(only);
    symlinkSync(which('curl')!, join(only, 'curl'));
    const path = walkthroughPath(workDir, only);
    expect(path).not.toBe(only);
    const bash = which('bash')!;
    const run = (script: string) => execFileSync(bash, ['-c', script], { env: { PATH: path }, encoding: 'utf8' });
    expect(run(`echo '{"api_key":{"key":"a2a_x"}}' | jq -r .api_key.key`)).toBe('a2a_x\n');
    expect(run(`echo '{"d":[{"id":"1"},{"id":"2"}]}' | jq -e --arg d 2 '.d[] | select(.id == $d) | .id'`)).toBe(
      '"2"\n',
    );
    expect(() => run(`echo '{"a":null}' | jq -e .a`)).toThrow();
    expect(() => walkthroughPath(workDir, join(workDir, 'empty'))).toThrow(NO_CURL);
    expect(NO_CURL).not.toContain('\n');
  });

  it('runs verbatim, top to bottom, against a fresh server', async () => {
    const markdown = readFileSync(WALKTHROUGH, 'utf8');
    const script = walkthroughScript(markdown).split('\n');
    expect(script.filter((line) => line === WALKTHROUGH_BASE)).toHaveLength(1);
    expect(script[0]).toBe('');
    const failures = join(workDir, 'failures');
    writeFileSync(failures, '');
    const runnable = [
      PRELUDE,
      ...script.slice(1).map((line) => (line === WALKTHROUGH_BASE ? `BASE=${server!.baseUrl}` : line)),
    ];
    writeFileSync(join(workDir, 'walkthrough.sh'), runnable.join('\n'));

    const { code, output } = await new Promise<{ code: number | null; output: string }>((done) => {
      const child = spawn('bash', ['walkthrough.sh'], {
        cwd: workDir,
        env: { PATH: walkthroughPath(workDir), HOME: workDir, A2A_FAILURES: failures },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (chunk) => (out += chunk));
      child.stderr.on('data', (chunk) => (out += chunk));
      child.on('close', (exitCode) => done({ code: exitCode, output: out }));
    });
    const failed = readFileSync(failures, 'utf8');
    if (code !== 0 || failed !== '') {
      throw new Error(
        `the walk-through failed (exit ${code}):\n${failed}\n--- output (last 4000 characters) ---\n${output.slice(-4000)}`,
      );
    }
  }, 120_000);
});
