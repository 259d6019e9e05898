import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { CoalescedLookup } from '../database/coalesced-lookup';
import { isEmbedded } from '../database/data-source';
import { KeysRepository, type VerifiedKey } from './keys.repository';

/**
 * Authentication's key lookups, coalesced (CoalescedLookup): the lookups asked for in
 * one turn of the event loop, or while two statements are out, go to PostgreSQL as one
 * prepared statement (`KeysRepository.findByHashes`), and a key asked for twice in a
 * batch is one row. Under load that is one round trip for many requests instead of one
 * each. On PostgreSQL a lookup begun as its request arrives (`arriving`:
 * AuthService.begin) goes at once while lookups come one at a time (CoalescedLookup's
 * `atOnce`), so that its round trip runs while the request's body is read. Not on the
 * embedded database: PGlite runs a statement in this process's own thread, so there is
 * no round trip to overlap, only batches to lose.
 *
 * It is not a cache, so revocation stays immediate on every instance (docs/api.md §2):
 * a lookup only ever joins a batch that has not been sent yet, so the statement that
 * answers a request is sent after that request arrived and sees every revocation
 * committed before it. No row outlives the batch it was read for.
 */
@Injectable()
export class KeyLookup {
  private readonly lookup: CoalescedLookup<Buffer, VerifiedKey>;
  /** The same by key id, for access tokens (`KeysRepository.findByIds`). */
  private readonly byId: CoalescedLookup<string, VerifiedKey>;
  /** Whether a lookup begun on arrival may go at once: on PostgreSQL. */
  private readonly atOnce: boolean;

  constructor(
    private readonly repository: KeysRepository,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.lookup = new CoalescedLookup<Buffer, VerifiedKey>(
      async (hashes) => {
        const found: Array<VerifiedKey | null> = hashes.map(() => null);
        for (const { position, ...row } of await this.repository.findByHashes(hashes)) {
          found[position - 1] = row;
        }
        return found;
      },
      (hash) => hash.toString('latin1'),
    );
    this.byId = new CoalescedLookup<string, VerifiedKey>(
      async (ids) => {
        const found: Array<VerifiedKey | null> = ids.map(() => null);
        for (const { position, ...row } of await this.repository.findByIds(ids)) {
          found[position - 1] = row;
        }
        return found;
      },
      (id) => id,
    );
    this.atOnce = !isEmbedded(config);
  }

  /**
   * The key whose SHA-256 is `hash`, with its identity's state; null when there is none.
   * `arriving`: asked for as its request arrives, before the request's body is read.
   */
  find(hash: Buffer, arriving = false): Promise<VerifiedKey | null> {
    return this.lookup.find(hash, arriving && this.atOnce);
  }

  /** The key `id` (a uuid), as `find` reads it: what an access token's key is now (docs/api.md §17). */
  findById(id: string, arriving = false): Promise<VerifiedKey | null> {
    return this.byId.find(id, arriving && this.atOnce);
  }
}
