import { Writable } from 'node:stream';

/** A stream to give a test's logger: each JSON line the application writes is parsed into `entries`. */
export function logEntries(entries: Array<Record<string, unknown>>): Writable {
  return new Writable({
    write(chunk, _, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) {
        entries.push(JSON.parse(line));
      }
      done();
    },
  });
}
