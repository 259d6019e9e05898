import { Inject, Injectable } from '@nestjs/common';
import { RemoteJwks, TRUSTED_JWKS_RULES } from '../common/remote-jwks';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { keyIdsNamed, parseTrustedKeys, verifyCard, type CardVerification, type PinnedKey } from './card-verification';
import { trustedJwksFetch } from './trusted-jwks-fetch';
import type { UpstreamRecord } from './upstream.repository';
import { reasonOf } from './upstream-fetch';

/** The `trusted_jwks_uri` sets kept in memory (past it, the first one kept goes). */
const MAX_SETS = 1_000;

/**
 * Verifies an upstream's card against the keys pinned for it (docs/api.md §14): the
 * `trusted_keys` saved with it, or the set at its `trusted_jwks_uri` — fetched as a
 * trusted issuer's keys are (trustedJwksFetch, RemoteJwks with TRUSTED_JWKS_RULES): kept
 * in memory, fetched again for a `kid` a signature names that the set does not hold
 * (at most once every 30 s) and, past an hour, in the background. With no set held and
 * none fetched, the card fails: it fails closed.
 */
@Injectable()
export class PinnedCardKeys {
  private readonly sets = new Map<string, RemoteJwks<PinnedKey>>();
  private readonly json: (uri: string) => Promise<unknown>;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.json = trustedJwksFetch(config.webhooksAllowPrivateNetworks);
  }

  /**
   * `raw` is the card as served, so that its signatures cover what they were made over.
   * `fresh` (a test of the upstream): the set at `trusted_jwks_uri` is fetched again —
   * at most once every 30 s, as for an unknown kid — so that a fixed key set shows at
   * once, and a set that cannot be read now fails the verification.
   */
  async verify(raw: unknown, trust: UpstreamRecord['trust'], fresh = false): Promise<CardVerification> {
    let pinned: readonly PinnedKey[] = [];
    try {
      if (trust.jwks) {
        pinned = await parseTrustedKeys(trust.jwks);
      } else if (trust.jwksUri) {
        const set = this.setOf(trust.jwksUri);
        pinned = fresh ? await set.refetch() : await set.keys();
        // A key the set does not hold: the upstream may have rotated; the set held serves if the fetch fails.
        if (keyIdsNamed(raw).some((kid) => !pinned.some((key) => key.kid === kid))) {
          const held = pinned;
          pinned = await set.refetch().catch(() => held);
        }
      }
    } catch (error) {
      return { status: 'failed', kid: null, error: `the pinned key set could not be read (${reasonOf(error)})` };
    }
    return verifyCard(raw, pinned);
  }

  private setOf(uri: string): RemoteJwks<PinnedKey> {
    let set = this.sets.get(uri);
    if (!set) {
      set = new RemoteJwks(() => this.json(uri), TRUSTED_JWKS_RULES, parseTrustedKeys);
      if (this.sets.size >= MAX_SETS) {
        this.sets.delete(this.sets.keys().next().value!);
      }
      this.sets.set(uri, set);
    }
    return set;
  }
}
