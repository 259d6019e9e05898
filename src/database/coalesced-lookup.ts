/** Batches sent and not yet answered; lookups arriving meanwhile wait for the next batch. */
const MAX_BATCHES_IN_FLIGHT = 2;

interface Queued<K, R> {
  key: K;
  waiters: Array<{ resolve: (row: R | null) => void; reject: (error: unknown) => void }>;
}

/**
 * Hot-path lookups, coalesced: those asked for in one turn of the event loop (and
 * those that arrive while MAX_BATCHES_IN_FLIGHT batches are out; when idle, those
 * after a first asked `atOnce`) are answered by one
 * statement — `fetch(keys)`, which answers each key at its position — and a key asked
 * for twice in a batch is looked up once. Under load that is one round trip for many
 * requests instead of one each; alone, a lookup waits one `setImmediate` (or, asked
 * `atOnce`, none).
 *
 * It is not a cache: a lookup only ever joins a batch that has not been sent yet, so
 * the statement that answers it is sent after it was asked and sees everything
 * committed before (a revoked key, a disabled identity, a new rule). No answer
 * outlives the batch it was read for.
 */
export class CoalescedLookup<K, R> {
  private queued = new Map<string, Queued<K, R>>();
  private scheduled = false;
  private inFlight = 0;
  /** How many lookups the last batch answered: one (or none yet) while lookups come one at a time. */
  private lastBatch = 0;

  constructor(
    /** The rows for `keys`, position for position (null: none). */
    private readonly fetch: (keys: K[]) => Promise<Array<R | null>>,
    /** The identity of a key, for asking it once per batch. */
    private readonly idOf: (key: K) => string,
  ) {}

  /**
   * `atOnce`: while lookups come one at a time — no batch out, and the last one held a
   * single lookup — this one goes at once instead of after the turn: for a lookup begun
   * before its caller has other work to do (the key of a request whose body is still
   * to be read), so that its round trip runs alongside that work. Under load (the last
   * batch held several) it waits for the turn as ever, and gathers with the others:
   * fewer statements for PostgreSQL, which is then the limit. Those asked for while one
   * is out gather for the next batch either way.
   */
  find(key: K, atOnce = false): Promise<R | null> {
    return new Promise((resolve, reject) => {
      const id = this.idOf(key);
      let entry = this.queued.get(id);
      if (!entry) {
        entry = { key, waiters: [] };
        this.queued.set(id, entry);
      }
      entry.waiters.push({ resolve, reject });
      if (atOnce && this.inFlight === 0 && !this.scheduled && this.lastBatch <= 1) {
        this.send();
      } else {
        this.schedule();
      }
    });
  }

  /** Sends the queued lookups after this turn's other requests had their say. */
  private schedule(): void {
    if (this.scheduled || this.inFlight >= MAX_BATCHES_IN_FLIGHT || this.queued.size === 0) {
      return;
    }
    this.scheduled = true;
    setImmediate(this.send);
  }

  private readonly send = (): void => {
    this.scheduled = false;
    const batch = [...this.queued.values()];
    this.queued = new Map();
    if (batch.length === 0) {
      return;
    }
    this.lastBatch = batch.length;
    this.inFlight += 1;
    this.fetch(batch.map((entry) => entry.key))
      .then(
        (rows) => {
          batch.forEach((entry, index) => {
            for (const waiter of entry.waiters) {
              waiter.resolve(rows[index] ?? null);
            }
          });
        },
        (error: unknown) => {
          for (const entry of batch) {
            for (const waiter of entry.waiters) {
              waiter.reject(error);
            }
          }
        },
      )
      .finally(() => {
        this.inFlight -= 1;
        this.schedule();
      });
  };
}
