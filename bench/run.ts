import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { machine } from './lib';

/**
 * `npm run bench` runs every benchmark in bench/*.bench.ts; `npm run bench -- auth`
 * runs one. Each module exports `run(): Promise<void>` and prints its own table.
 */
async function main(): Promise<void> {
  const wanted = process.argv.slice(2);
  const available = readdirSync(__dirname)
    .filter((f) => f.endsWith('.bench.ts'))
    .map((f) => f.replace(/\.bench\.ts$/, ''))
    .sort();
  const selected = wanted.length > 0 ? wanted : available;
  const unknown = selected.filter((name) => !available.includes(name));
  if (unknown.length > 0) {
    console.error(`unknown benchmark(s): ${unknown.join(', ')}; available: ${available.join(', ')}`);
    process.exit(2);
  }
  console.log(`machine: ${machine()}\n`);
  for (const name of selected) {
    console.log(`## ${name}\n`);
    const module = (await import(join(__dirname, `${name}.bench.ts`))) as { run: () => Promise<void> };
    await module.run();
    console.log('');
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
