/**
 * Streams (protocol and event streams) and blocking sends open per API key (or Console session) (PROTOCOL_MAX_OPEN_CALLS_PER_KEY). Counted
 * in this process's memory: each instance admits its own maximum, so n instances admit up
 * to n × max per key. A call holds its slot from before the method runs until it ends.
 */
export class OpenCalls {
  private readonly open = new Map<string, number>();

  constructor(private readonly max: number) {}

  /** A slot for `keyId`, given back by the returned function (once, however often it is called); null when none is free. */
  take(keyId: string): (() => void) | null {
    const count = this.count(keyId);
    if (count >= this.max) {
      return null;
    }
    this.open.set(keyId, count + 1);
    let held = true;
    return () => {
      if (!held) {
        return;
      }
      held = false;
      const left = this.count(keyId) - 1;
      if (left > 0) {
        this.open.set(keyId, left);
      } else {
        this.open.delete(keyId);
      }
    };
  }

  count(keyId: string): number {
    return this.open.get(keyId) ?? 0;
  }
}
