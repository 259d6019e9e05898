// `npm start`'s prestart: builds (Nest, then the Console with Vite) only when the build's
// inputs changed since dist/ was made, so a second start of the same checkout starts at
// once. The inputs are hashed — paths and contents — and the hash is written into dist/
// after a successful build; a missing or different stamp, or a missing entry point,
// means a build. `npm run build` always builds; `npm run dev` is the watch mode.
// Plain CommonJS, no TypeScript loader: it runs before every start and must cost nothing.
const { createHash } = require('node:crypto');
const { spawnSync } = require('node:child_process');
const { existsSync, readdirSync, readFileSync, statSync, writeFileSync } = require('node:fs');
const { join, relative, sep } = require('node:path');

/** What the build reads: the server's and the Console's sources, the typed client, the compiler and bundler settings, the dependencies. */
const INPUTS = [
  'src',
  'console',
  'client',
  'tsconfig.json',
  'tsconfig.build.json',
  'nest-cli.json',
  'package.json',
  'package-lock.json',
];
/** Files the build must leave; without one of them, build whatever the stamp says. */
const OUTPUTS = ['dist/main.js', 'dist/worker.js', 'dist/cli.js', 'dist/console-app/index.html'];
const STAMP = 'dist/.build-inputs';

function files(root, path) {
  const full = join(root, path);
  if (!existsSync(full)) {
    return [];
  }
  if (!statSync(full).isDirectory()) {
    return [path];
  }
  return readdirSync(full)
    .filter((name) => name !== 'node_modules' && !name.endsWith('.tsbuildinfo'))
    .flatMap((name) => files(root, join(path, name)));
}

/** A hash of every input file's path and content under `root`. */
function inputsHash(root) {
  const hash = createHash('sha256');
  const paths = INPUTS.flatMap((path) => files(root, path))
    .map((path) => relative(root, join(root, path)).split(sep).join('/'))
    .sort();
  for (const path of paths) {
    hash.update(`${path}\0`);
    hash.update(readFileSync(join(root, path)));
    hash.update('\0');
  }
  return hash.digest('hex');
}

/** Why `root` needs a build, or null when dist/ was built from exactly the inputs it has now. */
function buildReason(root) {
  const missing = OUTPUTS.find((path) => !existsSync(join(root, path)));
  if (missing) {
    return `${missing} is missing`;
  }
  const stamp = join(root, STAMP);
  if (!existsSync(stamp)) {
    return 'dist/ has no record of its inputs';
  }
  if (readFileSync(stamp, 'utf8').trim() !== inputsHash(root)) {
    return 'the sources changed since the last build';
  }
  return null;
}

/** Records `hash` (by default, of the inputs as they are now) as what dist/ was built from. */
function writeStamp(root, hash = inputsHash(root)) {
  writeFileSync(join(root, STAMP), `${hash}\n`);
}

function main() {
  const root = process.cwd();
  const reason = buildReason(root);
  if (reason === null) {
    process.stdout.write('dist/ is current (no source changed since it was built): skipping the build\n');
    return;
  }
  process.stdout.write(`building: ${reason}\n`);
  // Hashed before the build, so an edit made while it runs triggers the next one.
  const hash = inputsHash(root);
  const npm = process.env.npm_execpath
    ? [process.execPath, [process.env.npm_execpath, 'run', 'build']]
    : ['npm', ['run', 'build']];
  const result = spawnSync(npm[0], npm[1], { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) {
    process.exit(result.status ?? 1);
  }
  writeStamp(root, hash);
}

module.exports = { INPUTS, OUTPUTS, buildReason, writeStamp };

if (require.main === module) {
  main();
}
