import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * The protocol and the ledger on the embedded database: the ledger's migration on
 * PGlite, the in-process notifier waking a stream and a blocking send, racing
 * replies on the one serialized connection. See embedded/scenario.ts.
 */
describe('protocol on the embedded database (no DATABASE_URL)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'a2a-embedded-protocol-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('streams, blocks and serializes replies with the in-process notifier', async () => {
    const { stdout } = await run(
      process.execPath,
      ['-r', 'ts-node/register/transpile-only', 'test/protocol/embedded/scenario.ts'],
      {
        env: { PATH: process.env.PATH, DATA_DIR: dataDir },
        timeout: 90_000,
      },
    );
    expect(JSON.parse(stdout)).toEqual({
      // Within one reply, its artifacts come before its status.
      streamed: ['task', 'artifact-update:', 'status-update:working', 'status-update:completed'],
      blocked: 'input-required',
      racedStatuses: [200],
      seqs: Array.from({ length: 21 }, (_, i) => i + 1),
      recentHistory: 3,
      retry: 'same task',
      foreignContext: -32602,
      tasksWritten: 0,
    });
  });
});
