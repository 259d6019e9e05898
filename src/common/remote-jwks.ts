import type { JsonWebKey, KeyObject } from 'node:crypto';
import { publicKeyFromJwk } from './jwt';

/** One key of a fetched JWK Set, parsed once when the set is fetched. */
export interface RemoteKey {
  jwk: JsonWebKey;
  key: KeyObject;
  kid?: string;
  alg?: string;
}

/** When a remote JWK Set is fetched again: each holder keeps its own rules. */
export interface RemoteJwksRules {
  /** Least time between two fetches for a key id the set does not hold (0: each time one is asked for). */
  unknownKidRefetchMs: number;
  /** How long a fetched set serves before its next use fetches it again in the background (Infinity: never). */
  ttlMs: number;
}

/**
 * A remote JWK Set kept in memory (a trusted issuer's, the Console's OpenID provider's):
 * fetched by `load` — the holder's own fetch, under its own address rules — once, then
 * again for a key id it does not hold (at most once every `unknownKidRefetchMs`) and,
 * past `ttlMs`, in the background. One fetch at a time: a caller that needs one while
 * another is under way waits for it. A failed fetch keeps the set held before it.
 */
export class RemoteJwks {
  private held: { keys: RemoteKey[]; fetchedAt: number } | null = null;
  private lastFetch = -Infinity;
  private fetching: Promise<RemoteKey[]> | null = null;

  constructor(
    private readonly load: () => Promise<unknown>,
    private readonly rules: RemoteJwksRules,
  ) {}

  /**
   * The keys held, fetching them first when none are (that fetch's failure is thrown; with
   * none held, a fetch failed less than `unknownKidRefetchMs` ago is not tried again yet).
   */
  async keys(): Promise<readonly RemoteKey[]> {
    if (!this.held) {
      if (!this.fetching && Date.now() - this.lastFetch < this.rules.unknownKidRefetchMs) {
        throw new Error('no keys held, and the last fetch failed');
      }
      return this.fetching ?? this.refresh();
    }
    if (Date.now() - this.held.fetchedAt > this.rules.ttlMs && !this.fetching) {
      void this.refresh().catch(() => undefined);
    }
    return this.held.keys;
  }

  /**
   * The key `kid`, or null when the set does not hold it even after fetching it again
   * (if the rules allow a fetch now). A failed fetch is thrown only when no set is held.
   */
  async key(kid: string): Promise<RemoteKey | null> {
    const found = (await this.keys()).find((key) => key.kid === kid);
    if (found) {
      return found;
    }
    return (await this.refetch().catch((error) => this.whenFailed(error))).find((key) => key.kid === kid) ?? null;
  }

  /**
   * The set fetched again for a key it does not hold — or the fetch under way, or the
   * set held when the last fetch was less than `unknownKidRefetchMs` ago. A failed
   * fetch is thrown.
   */
  async refetch(): Promise<readonly RemoteKey[]> {
    if (this.fetching) {
      return this.fetching;
    }
    if (this.held && Date.now() - this.lastFetch < this.rules.unknownKidRefetchMs) {
      return this.held.keys;
    }
    return this.refresh();
  }

  /** Fetches the set now (a holder may ask so that its first use pays no fetch). */
  refresh(): Promise<RemoteKey[]> {
    const fetching = this.fetchKeys().finally(() => {
      if (this.fetching === fetching) {
        this.fetching = null;
      }
    });
    this.fetching = fetching;
    return fetching;
  }

  private whenFailed(error: unknown): readonly RemoteKey[] {
    if (!this.held) {
      throw error;
    }
    return this.held.keys;
  }

  private async fetchKeys(): Promise<RemoteKey[]> {
    this.lastFetch = Date.now();
    const keys = parseJwks(await this.load());
    if (!keys) {
      throw new Error('not a JWK Set');
    }
    this.held = { keys, fetchedAt: Date.now() };
    return keys;
  }
}

/** The usable signing keys of a JWK Set (others are skipped); null when `body` is not a JWK Set. */
export function parseJwks(body: unknown): RemoteKey[] | null {
  const set = body as { keys?: unknown } | null;
  if (!set || typeof set !== 'object' || !Array.isArray(set.keys)) {
    return null;
  }
  const keys: RemoteKey[] = [];
  for (const jwk of set.keys as Array<JsonWebKey & { kid?: unknown; alg?: unknown }>) {
    const key = jwk && typeof jwk === 'object' ? publicKeyFromJwk(jwk) : null;
    if (key) {
      keys.push({
        jwk,
        key,
        kid: typeof jwk.kid === 'string' ? jwk.kid : undefined,
        alg: typeof jwk.alg === 'string' ? jwk.alg : undefined,
      });
    }
  }
  return keys;
}
