// `jq` for the walk-through test (docs/walkthrough.md) on a machine that has none: jq compiled to
// WebAssembly (the jq-wasm dev dependency), reading its input from stdin as the
// walk-through's pipes give it. Flags pass through to jq (-r, -e, --arg NAME VALUE, …);
// input files are not supported. test/support/walkthrough-tools.ts puts it on the PATH.
const { Buffer } = require('node:buffer');
const { raw } = require('jq-wasm');

const args = process.argv.slice(2);
const flags = [];
let filter;
for (let i = 0; i < args.length; i += 1) {
  const arg = args[i];
  if (['--arg', '--argjson'].includes(arg)) {
    flags.push(arg, args[i + 1], args[i + 2]);
    i += 2;
  } else if (arg.startsWith('-') && arg !== '-') {
    flags.push(arg);
  } else if (filter === undefined) {
    filter = arg;
  } else {
    process.stderr.write('jq (jq-wasm): input files are not supported, pipe the input\n');
    process.exit(2);
  }
}

const chunks = [];
process.stdin.on('data', (chunk) => chunks.push(chunk));
process.stdin.on('end', async () => {
  const result = await raw(Buffer.concat(chunks).toString('utf8'), filter ?? '.', flags);
  if (result.stdout) {
    process.stdout.write(`${result.stdout}\n`);
  }
  if (result.stderr) {
    process.stderr.write(`${result.stderr}\n`);
  }
  process.exitCode = result.exitCode;
});
