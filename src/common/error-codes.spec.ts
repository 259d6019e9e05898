import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { A2A_ERROR_KIND } from '../protocol/a2a-errors';
import { ERROR_CODES, statusesOf, type ErrorCode } from './error-codes';

const ROOT = join(__dirname, '..', '..');
const DOCS = join(ROOT, 'docs', 'api.md');
const START = '<!-- error-codes: generated from src/common/error-codes.ts; error-codes.spec.ts checks it (UPDATE_DOCS=1 rewrites it) -->';
const END = '<!-- /error-codes -->';

const codes = Object.keys(ERROR_CODES) as ErrorCode[];

/** docs/api.md §9's table of codes, by status, then code. */
function errorTable(): string {
  const rows = codes
    .map((code) => ({ code, statuses: statusesOf(code), doc: ERROR_CODES[code].doc }))
    .sort((a, b) => a.statuses[0] - b.statuses[0] || a.code.localeCompare(b.code))
    .map(({ code, statuses, doc }) => `| \`${code}\` | ${statuses.join(', ')} | ${doc} |`);
  return [START, '| Code | Status | When |', '|---|---|---|', ...rows, END].join('\n');
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

describe('error codes', () => {
  it('give every code an error status and a line of documentation', () => {
    for (const code of codes) {
      expect({ code, ok: statusesOf(code).length > 0 && statusesOf(code).every((s) => Number.isInteger(s) && s >= 400 && s < 600) })
        .toEqual({ code, ok: true });
      expect(ERROR_CODES[code].doc.trim()).not.toBe('');
      expect(code).toMatch(/^[a-z]+(_[a-z]+)*$/);
    }
  });

  it('list no code that nothing answers with', () => {
    const catalogue = new Set([join(ROOT, 'src/common/error-codes.ts'), join(ROOT, 'src/protocol/a2a-errors.ts')]);
    const source = sourceFiles(join(ROOT, 'src')).filter((f) => !catalogue.has(f)).map((f) => readFileSync(f, 'utf8')).join('\n');
    expect(codes.filter((code) => !source.includes(`'${code}'`))).toEqual([]);
  });

  it('map to an A2A error: only a server error is internal', () => {
    expect(Object.keys(A2A_ERROR_KIND).sort()).toEqual([...codes].sort());
    for (const code of codes) {
      const internal = statusesOf(code).some((status) => status >= 500);
      expect({ code, kind: A2A_ERROR_KIND[code] === 'Internal' }).toEqual({ code, kind: internal });
    }
  });

  it('are the table of docs/api.md §9', () => {
    const docs = readFileSync(DOCS, 'utf8');
    const start = docs.indexOf(START);
    const end = docs.indexOf(END);
    expect(start).toBeGreaterThan(-1);
    expect(end).toBeGreaterThan(start);
    const updated = docs.slice(0, start) + errorTable() + docs.slice(end + END.length);
    if (process.env.UPDATE_DOCS === '1') writeFileSync(DOCS, updated);
    else expect(docs.slice(start, end + END.length)).toEqual(errorTable());
  });
});
