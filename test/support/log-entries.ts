import { Writable } from 'node:stream';

/** A stream that hands each line written to it to `take`. */
function eachLine(take: (line: string) => void): Writable {
  return new Writable({
    write(chunk, _, done) {
      String(chunk).split('\n').filter(Boolean).forEach(take);
      done();
    },
  });
}

/** A stream to give a test's logger: each line the application writes is pushed onto `lines`, as written. */
export function logLines(lines: string[]): Writable {
  return eachLine((line) => lines.push(line));
}

/** A stream to give a test's logger: each JSON line the application writes is parsed into `entries`. */
export function logEntries(entries: Array<Record<string, unknown>>): Writable {
  return eachLine((line) => entries.push(JSON.parse(line)));
}
