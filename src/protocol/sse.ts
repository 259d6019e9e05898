import { once } from 'node:events';
import type { Writable } from 'node:stream';

/**
 * Writes one SSE frame. When the socket's buffer is full, waits until it drains, so a
 * slow reader holds back the stream (and its ledger reads) instead of filling the
 * server's memory; rejects if `signal` aborts meanwhile (the client went away, the
 * stream's time is up, shutdown).
 */
export async function writeFrame(out: Writable, frame: string, signal: AbortSignal): Promise<void> {
  signal.throwIfAborted();
  if (!out.write(frame)) {
    await once(out, 'drain', { signal });
  }
}
