import { Inject, Injectable } from '@nestjs/common';
import type { JsonWebKey, KeyObject } from 'node:crypto';
import { JwtRefused, publicKeyFromJwk } from '../common/jwt';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { systemResolver } from '../events/delivery-sender';
import { upstreamFetch } from '../upstream/upstream-fetch';

/** How often, at most, an issuer's keys are fetched again for a key id not known yet. */
export const UNKNOWN_KID_REFETCH_MS = 30_000;
/** How long fetched keys serve before the next token of the issuer fetches them again (in the background). */
const KEYS_TTL_MS = 3_600_000;
const FETCH_TIMEOUT_MS = 5_000;
const MAX_JWKS_BYTES = 256 * 1024;

interface IssuerKeySet {
  keys: Map<string, { key: KeyObject; alg?: string }>;
  fetchedAt: number;
}

/**
 * The keys of trusted issuers (docs/api.md §17), by issuer and JWKS address: fetched under
 * the webhook address rules (upstreamFetch: https only, public addresses only unless
 * WEBHOOKS_ALLOW_PRIVATE_NETWORKS, no redirects, a timeout and a size limit), kept in
 * memory so that a token costs no network call, fetched again for an unknown `kid` at
 * most once every UNKNOWN_KID_REFETCH_MS. With no key known (never fetched, or the
 * JWKS unreachable), a token is refused: it fails closed.
 */
@Injectable()
export class IssuerKeys {
  private readonly sets = new Map<string, IssuerKeySet>();
  private readonly lastFetch = new Map<string, number>();
  /** Fetches under way, by issuer: a token that needs one waits for it rather than fetching again. */
  private readonly fetching = new Map<string, Promise<IssuerKeySet>>();
  private readonly fetch: typeof fetch;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.fetch = upstreamFetch({
      allowPrivateNetworks: config.webhooksAllowPrivateNetworks,
      resolve: systemResolver,
      timeoutMs: FETCH_TIMEOUT_MS,
      maxResponseBytes: MAX_JWKS_BYTES,
    });
  }

  /** The issuer's key `kid`; refuses with `unknown_kid` or `jwks_unavailable`. */
  async key(issuer: string, jwksUri: string | null, kid: string): Promise<{ key: KeyObject; alg?: string }> {
    const id = `${issuer}\n${jwksUri ?? ''}`;
    let set = this.sets.get(id);
    const known = set?.keys.get(kid);
    if (known) {
      if (Date.now() - set!.fetchedAt > KEYS_TTL_MS) {
        void this.refresh(id, issuer, jwksUri).catch(() => undefined);
      }
      return known;
    }
    const underWay = this.fetching.get(id);
    if (underWay || Date.now() - (this.lastFetch.get(id) ?? -Infinity) >= UNKNOWN_KID_REFETCH_MS) {
      set = (await (underWay ?? this.refresh(id, issuer, jwksUri)).catch(() => undefined)) ?? set;
    }
    if (!set) {
      throw new JwtRefused('jwks_unavailable', "The issuer's keys could not be fetched, and none is known.");
    }
    const found = set.keys.get(kid);
    if (!found) {
      throw new JwtRefused('unknown_kid', "The token's key id is not among the issuer's keys.");
    }
    return found;
  }

  /** Fetches the issuer's keys now (saving a trust does, so its first token pays no fetch). */
  async prefetch(issuer: string, jwksUri: string | null): Promise<void> {
    await this.refresh(`${issuer}\n${jwksUri ?? ''}`, issuer, jwksUri);
  }

  private refresh(id: string, issuer: string, jwksUri: string | null): Promise<IssuerKeySet> {
    const fetching = this.fetchKeys(id, issuer, jwksUri).finally(() => this.fetching.delete(id));
    this.fetching.set(id, fetching);
    return fetching;
  }

  private async fetchKeys(id: string, issuer: string, jwksUri: string | null): Promise<IssuerKeySet> {
    this.lastFetch.set(id, Date.now());
    const uri = jwksUri ?? (await this.discover(issuer));
    const body = (await this.json(uri)) as { keys?: unknown };
    if (!Array.isArray(body.keys)) {
      throw new Error('not a JWK Set');
    }
    const keys = new Map<string, { key: KeyObject; alg?: string }>();
    for (const jwk of body.keys as Array<JsonWebKey & { kid?: unknown; alg?: unknown }>) {
      const key = typeof jwk?.kid === 'string' ? publicKeyFromJwk(jwk) : null;
      if (key) {
        keys.set(jwk.kid as string, { key, alg: typeof jwk.alg === 'string' ? jwk.alg : undefined });
      }
    }
    const set = { keys, fetchedAt: Date.now() };
    this.sets.set(id, set);
    return set;
  }

  /** The `jwks_uri` of the issuer's OpenID discovery document. */
  private async discover(issuer: string): Promise<string> {
    const document = (await this.json(`${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`)) as {
      jwks_uri?: unknown;
    };
    if (typeof document.jwks_uri !== 'string') {
      throw new Error('no jwks_uri');
    }
    return document.jwks_uri;
  }

  private async json(uri: string): Promise<unknown> {
    const res = await this.fetch(uri, { headers: { accept: 'application/json' } });
    if (!res.ok) {
      throw new Error(`status ${res.status}`);
    }
    return res.json();
  }
}
