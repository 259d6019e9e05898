import { Injectable } from '@nestjs/common';
import { KeysRepository, type VerifiedKeyRow } from './keys.repository';

/** Batches sent and not yet answered; lookups arriving meanwhile wait for the next batch. */
const MAX_BATCHES_IN_FLIGHT = 2;

interface Queued {
  hash: Buffer;
  waiters: Array<{ resolve: (row: VerifiedKeyRow | null) => void; reject: (error: unknown) => void }>;
}

/**
 * Authentication's key lookups, coalesced: the lookups asked for in one turn of the
 * event loop (and those that arrive while MAX_BATCHES_IN_FLIGHT batches are out) go
 * to PostgreSQL as one prepared statement (`KeysRepository.findByHashes`), and a key
 * asked for twice in a batch is one row. Under load that is one round trip for many
 * requests instead of one each.
 *
 * It is not a cache, so revocation stays immediate on every instance (CONTRACT §2):
 * a lookup only ever joins a batch that has not been sent yet, so the statement that
 * answers a request is sent after that request arrived and sees every revocation
 * committed before it. No row outlives the batch it was read for.
 */
@Injectable()
export class KeyLookup {
  private queued = new Map<string, Queued>();
  private scheduled = false;
  private inFlight = 0;

  constructor(private readonly repository: KeysRepository) {}

  /** The key whose SHA-256 is `hash`, with its identity's state; null when there is none. */
  find(hash: Buffer): Promise<VerifiedKeyRow | null> {
    return new Promise((resolve, reject) => {
      const id = hash.toString('latin1');
      let entry = this.queued.get(id);
      if (!entry) {
        entry = { hash, waiters: [] };
        this.queued.set(id, entry);
      }
      entry.waiters.push({ resolve, reject });
      this.schedule();
    });
  }

  /** Sends the queued lookups after this turn's other requests had their say. */
  private schedule(): void {
    if (this.scheduled || this.inFlight >= MAX_BATCHES_IN_FLIGHT || this.queued.size === 0) return;
    this.scheduled = true;
    setImmediate(this.send);
  }

  private readonly send = (): void => {
    this.scheduled = false;
    const batch = [...this.queued.values()];
    this.queued = new Map();
    if (batch.length === 0) return;
    this.inFlight += 1;
    this.repository
      .findByHashes(batch.map((entry) => entry.hash))
      .then(
        (rows) => {
          const found: Array<VerifiedKeyRow | undefined> = new Array(batch.length);
          for (const { position, ...row } of rows) found[position - 1] = row;
          batch.forEach((entry, index) => {
            for (const waiter of entry.waiters) waiter.resolve(found[index] ?? null);
          });
        },
        (error: unknown) => {
          for (const entry of batch) for (const waiter of entry.waiters) waiter.reject(error);
        },
      )
      .finally(() => {
        this.inFlight -= 1;
        this.schedule();
      });
  };
}
