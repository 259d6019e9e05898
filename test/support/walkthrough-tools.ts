import { accessSync, chmodSync, constants, mkdirSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';

export const NO_CURL =
  'the walk-through test (docs/walkthrough.md) needs curl, which is not on the PATH: install it (Debian: apt-get install -y curl)';

/** The first executable `command` on `path`. */
export function which(command: string, path = process.env.PATH ?? ''): string | undefined {
  for (const dir of path.split(delimiter).filter(Boolean)) {
    try {
      accessSync(join(dir, command), constants.X_OK);
      return join(dir, command);
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * The PATH the walk-through test (docs/walkthrough.md) runs with: `path`, and when it has no `jq`, a folder
 * under `workDir` with one — jq-wasm through this Node (test/support/jq-wasm-cli.js). curl
 * has no such stand-in: without it the test fails with one line saying how to get it.
 */
export function walkthroughPath(workDir: string, path = process.env.PATH ?? ''): string {
  if (!which('curl', path)) {
    throw new Error(NO_CURL);
  }
  if (which('jq', path)) {
    return path;
  }
  const bin = join(workDir, 'bin');
  mkdirSync(bin, { recursive: true });
  const cli = join(__dirname, 'jq-wasm-cli.js');
  writeFileSync(join(bin, 'jq'), `#!/bin/sh\nexec '${process.execPath}' '${cli}' "$@"\n`);
  chmodSync(join(bin, 'jq'), 0o755);
  return `${bin}${delimiter}${path}`;
}
