import type { JsonWebKey, KeyObject } from 'node:crypto';
import { publicKeyFromJwk } from './jwk';
import { JWT_ALGORITHMS } from './jwt';

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
 * The rules of a JWK Set at an address a tenant gave (a trusted issuer's `jwks_uri`, an
 * upstream's `trusted_jwks_uri`): an unknown key id fetches it again at most once every
 * 30 s, and past an hour its next use fetches it again in the background.
 */
export const TRUSTED_JWKS_RULES: RemoteJwksRules = { unknownKidRefetchMs: 30_000, ttlMs: 3_600_000 };

/**
 * A remote JWK Set kept in memory (a trusted issuer's, an upstream's pinned set, the
 * Console's OpenID provider's): fetched by `load` — the holder's own fetch, under its own
 * address rules — and read by `parse` (null: not a JWK Set; a throw: a set the holder
 * refuses), once, then again for a key id it does not hold (at most once every
 * `unknownKidRefetchMs`) and, past `ttlMs`, in the background. One fetch at a time: a
 * caller that needs one while another is under way waits for it. A failed fetch keeps
 * the set held before it.
 */
export class RemoteJwks<K extends { kid?: string } = RemoteKey> {
  private held: { keys: K[]; fetchedAt: number } | null = null;
  private lastFetch = -Infinity;
  private lastFailure: unknown = null;
  private fetching: Promise<K[]> | null = null;

  constructor(
    private readonly load: () => Promise<unknown>,
    private readonly rules: RemoteJwksRules,
    private readonly parse: (body: unknown) => K[] | null | Promise<K[] | null>,
  ) {}

  /**
   * The keys held, fetching them first when none are (that fetch's failure is thrown; with
   * none held, a fetch failed less than `unknownKidRefetchMs` ago is not tried again yet,
   * and its failure is thrown again).
   */
  async keys(): Promise<readonly K[]> {
    if (!this.held) {
      if (!this.fetching && Date.now() - this.lastFetch < this.rules.unknownKidRefetchMs) {
        throw this.lastFailure ?? new Error('no keys held, and the last fetch failed');
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
  async key(kid: string): Promise<K | null> {
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
  async refetch(): Promise<readonly K[]> {
    if (this.fetching) {
      return this.fetching;
    }
    if (this.held && Date.now() - this.lastFetch < this.rules.unknownKidRefetchMs) {
      return this.held.keys;
    }
    return this.refresh();
  }

  /** Fetches the set now (a holder may ask so that its first use pays no fetch). */
  refresh(): Promise<K[]> {
    const fetching = this.fetchKeys().finally(() => {
      if (this.fetching === fetching) {
        this.fetching = null;
      }
    });
    this.fetching = fetching;
    return fetching;
  }

  private whenFailed(error: unknown): readonly K[] {
    if (!this.held) {
      throw error;
    }
    return this.held.keys;
  }

  private async fetchKeys(): Promise<K[]> {
    this.lastFetch = Date.now();
    try {
      const keys = await this.parse(await this.load());
      if (!keys) {
        throw new Error('not a JWK Set');
      }
      this.held = { keys, fetchedAt: Date.now() };
      this.lastFailure = null;
      return keys;
    } catch (error) {
      this.lastFailure = error;
      throw error;
    }
  }
}

/** The keys of a JWK Set that sign tokens (others are skipped); null when `body` is not a JWK Set. */
export function parseJwks(body: unknown): RemoteKey[] | null {
  const set = body as { keys?: unknown } | null;
  if (!set || typeof set !== 'object' || !Array.isArray(set.keys)) {
    return null;
  }
  const keys: RemoteKey[] = [];
  for (const jwk of set.keys as Array<JsonWebKey & { kid?: unknown; alg?: unknown }>) {
    const key = jwk && typeof jwk === 'object' ? publicKeyFromJwk(jwk, JWT_ALGORITHMS) : null;
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
