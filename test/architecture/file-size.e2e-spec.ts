import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * No file under src/ or console/src/ (the Console's own code) grows past MAX_LINES: one
 * that does holds more than one idea, and is split by the idea each part holds (a
 * coherent piece into a file of its own), not cut at an arbitrary line. Every file
 * counts, unit specs and checked-in SQL too.
 */
const ROOT = join(__dirname, '../..');
const MAX_LINES = 600;

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? files(path) : [path];
  });
}

/** Lines as an editor numbers them: a final newline ends the last line, it does not start another. */
function lineCount(text: string): number {
  return text === '' ? 0 : text.replace(/\n$/, '').split('\n').length;
}

describe('file size', () => {
  it(`no file under src/ or console/src/ is over ${MAX_LINES} lines`, () => {
    const tooLong = [...files(join(ROOT, 'src')), ...files(join(ROOT, 'console/src'))]
      .map((path) => ({ path: relative(ROOT, path), lines: lineCount(readFileSync(path, 'utf8')) }))
      .filter(({ lines }) => lines > MAX_LINES)
      .map(({ path, lines }) => `${path}: ${lines} lines`);
    expect(tooLong).toEqual([]);
  });

  it('counts lines as an editor does', () => {
    expect([lineCount(''), lineCount('a'), lineCount('a\n'), lineCount('a\nb\n'), lineCount('a\n\n')]).toEqual([
      0, 1, 1, 2, 2,
    ]);
  });
});
