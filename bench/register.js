// `npm run bench` loads the benchmarks' TypeScript with this hook instead of ts-node: the
// service is measured in the bench's own process, and ts-node loads Node's REPL, which
// loads `domain` — from then on every event emitter and every callback from Node's I/O
// of the process goes through domain's wrappers, which the shipped server (`node
// dist/main.js`) never loads. What that changed in the figures is in BENCHMARKS.md
// ("The benches' loader"). Each file is transpiled alone, as ts-node's
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
