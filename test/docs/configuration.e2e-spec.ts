import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');

/** Every environment variable src/config/config.ts reads (its readers take `env` and the name). */
function variablesRead(): Set<string> {
  const source = readFileSync(join(ROOT, 'src/config/config.ts'), 'utf8');
  const names = [
    ...source.matchAll(/\b(?:str|int|bool|oneOf|durations|url)\(\s*env,\s*'([A-Z][A-Z0-9_]*)'/g),
    ...source.matchAll(/\benv\.([A-Z][A-Z0-9_]*)/g),
  ].map((match) => match[1]);
  return new Set(names);
}

/** The variables a document's tables name in their first column, and the document's text. */
function variablesDocumented(path: string): { table: Set<string>; text: string } {
  const text = readFileSync(join(ROOT, path), 'utf8');
  const table = new Set<string>();
  for (const [, first] of text.matchAll(/^\| ([^|]*`[A-Z][A-Z0-9_]*`[^|]*) \|/gm)) {
    for (const [, name] of first.matchAll(/`([A-Z][A-Z0-9_]*)`/g)) {
      table.add(name);
    }
  }
  return { table, text };
}

/** docs/configuration.md describes the configuration the server reads, all of it and nothing else. */
describe('docs/configuration.md', () => {
  const read = variablesRead();
  const { table, text } = variablesDocumented('docs/configuration.md');

  it('finds the variables on both sides', () => {
    expect(read.size).toBeGreaterThan(50);
    expect(read).toContain('PORT');
    expect(read).toContain('LEDGER_MAX_ARTIFACT_BYTES_PER_TASK'); // a reader call over several lines
    expect(table).toContain('HOST'); // a row naming two variables
  });

  it('names every variable src/config/config.ts reads', () => {
    expect([...read].filter((name) => !text.includes(`\`${name}\``))).toEqual([]);
  });

  it('lists no variable src/config/config.ts does not read', () => {
    expect([...table].filter((name) => !read.has(name))).toEqual([]);
  });

  it("holds every variable of the README's short list", () => {
    const readme = variablesDocumented('README.md').table;
    expect(readme).toContain('DATABASE_URL');
    expect([...readme].filter((name) => !table.has(name))).toEqual([]);
  });
});
