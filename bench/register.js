// `npm run bench` loads the benchmarks' TypeScript with this hook instead of ts-node: the
// service is measured in the bench's own process, and ts-node loads Node's REPL, which
// loads `domain` — from then on every event emitter and every callback from Node's I/O
// of the process goes through domain's wrappers, which the shipped server (`node
// dist/main.js`) never loads. Measured on the stream round trip of `npm run bench --
// protocol`: 7.8–8.7 ms p50 under ts-node against 5.8–6.6 ms under this hook, three
// interleaved runs each (BENCHMARKS.md). Each file is transpiled alone, as ts-node's
// transpile-only mode does (tsconfig.json has isolatedModules): no type check here, `tsc`
// in `npm test` does that. No source maps either (a stack names the transpiled line,
// within a line or two of the source's): mapping them would wrap every stack trace.
const { readFileSync } = require('node:fs');
const { join } = require('node:path');
const ts = require('typescript');

const root = join(__dirname, '..');
const { config } = ts.readConfigFile(join(root, 'tsconfig.json'), ts.sys.readFile);
const { options } = ts.convertCompilerOptionsFromJson(config.compilerOptions, root);
const compilerOptions = { ...options, sourceMap: false, incremental: false };

require.extensions['.ts'] = (module, filename) => {
  const source = readFileSync(filename, 'utf8');
  const { outputText } = ts.transpileModule(source, { compilerOptions, fileName: filename });
  module._compile(outputText, filename);
};
