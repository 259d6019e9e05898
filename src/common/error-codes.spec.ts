import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { A2A_ERROR_KIND } from '../protocol/a2a-errors';
import { AppError, badRequest, notFound } from './app-error';
import { ERROR_CODES, statusesOf, type ErrorCode } from './error-codes';

const ROOT = join(__dirname, '..', '..');
const DOCS = join(ROOT, 'docs', 'api.md');
const START =
  '<!-- error-codes: generated from src/common/error-codes.ts; error-codes.spec.ts checks it (UPDATE_DOCS=1 rewrites it) -->';
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
    if (entry.isDirectory()) {
      return sourceFiles(path);
    }
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

describe('error codes', () => {
  it('give every code an error status and a line of documentation', () => {
    for (const code of codes) {
      expect({
        code,
        ok: statusesOf(code).length > 0 && statusesOf(code).every((s) => Number.isInteger(s) && s >= 400 && s < 600),
      }).toEqual({ code, ok: true });
      expect(ERROR_CODES[code].doc.trim()).not.toBe('');
      expect(code).toMatch(/^[a-z]+(_[a-z]+)*$/);
    }
  });

  it('are the only codes errors take, each with its own status (tsc checks the @ts-expect-error lines)', () => {
    // @ts-expect-error: not a code of the catalogue
    expect(badRequest('no_such_code', 'x').status).toBe(400);
    // @ts-expect-error: a 404 code as a 400
    expect(badRequest('task_not_found', 'x').status).toBe(400);
    // @ts-expect-error: a 400 code as a 409
    expect(new AppError(409, 'validation_failed', 'x').status).toBe(409);
    // A code with two statuses takes either.
    expect([notFound('context_not_found', 'x').status, badRequest('context_not_found', 'x').status]).toEqual([
      404, 400,
    ]);
    expect(AppError.withStatus(418, 'bad_request', 'x')).toMatchObject({
      status: 418,
      code: 'bad_request',
      detail: 'x',
      title: "I'm a Teapot",
    });
  });

  it('list no code that nothing answers with', () => {
    const catalogue = new Set([join(ROOT, 'src/common/error-codes.ts'), join(ROOT, 'src/protocol/a2a-errors.ts')]);
    const source = sourceFiles(join(ROOT, 'src'))
      .filter((f) => !catalogue.has(f))
      .map((f) => readFileSync(f, 'utf8'))
      .join('\n');
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
    if (process.env.UPDATE_DOCS === '1') {
      writeFileSync(DOCS, updated);
    } else {
      expect(docs.slice(start, end + END.length)).toEqual(errorTable());
    }
  });
});
