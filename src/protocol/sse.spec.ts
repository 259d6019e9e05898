import { Writable } from 'node:stream';
import { writeFrame } from './sse';

/** A socket whose writes complete only when `flush` is called. */
function slowSocket(highWaterMark: number) {
  const pending: Array<() => void> = [];
  const written: string[] = [];
  const out = new Writable({
    highWaterMark,
    write(chunk: Buffer, _encoding, done) {
      written.push(chunk.toString());
      pending.push(done);
    },
  });
  return { out, written, flush: () => pending.splice(0).forEach((done) => done()) };
}

describe('writeFrame', () => {
  it('returns at once while the buffer has room', async () => {
    const { out, written } = slowSocket(1024);
    await writeFrame(out, 'data: 1\n\n', new AbortController().signal);
    expect(written).toEqual(['data: 1\n\n']);
  });

  it('waits for drain when the buffer is full', async () => {
    const { out, flush } = slowSocket(4);
    let done = false;
    const writing = writeFrame(out, 'data: a frame longer than the buffer\n\n', new AbortController().signal).then(
      () => (done = true),
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(done).toBe(false);
    flush();
    await writing;
    expect(done).toBe(true);
  });

  it('gives up when the call is aborted while waiting, or before writing', async () => {
    const { out } = slowSocket(4);
    const abort = new AbortController();
    const writing = writeFrame(out, 'data: a frame longer than the buffer\n\n', abort.signal);
    abort.abort();
    await expect(writing).rejects.toMatchObject({ name: 'AbortError' });
    await expect(writeFrame(out, 'data: x\n\n', abort.signal)).rejects.toMatchObject({ name: 'AbortError' });
  });
});
