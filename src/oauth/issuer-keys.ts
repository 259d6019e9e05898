import { Inject, Injectable } from '@nestjs/common';
import { JwtRefused } from '../common/jwt';
import { RemoteJwks, type RemoteKey } from '../common/remote-jwks';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { systemResolver } from '../events/delivery-sender';
import { upstreamFetch } from '../upstream/upstream-fetch';

/** How often, at most, an issuer's keys are fetched again for a key id not known yet. */
export const UNKNOWN_KID_REFETCH_MS = 30_000;
/** How long fetched keys serve before the next token of the issuer fetches them again (in the background). */
const KEYS_TTL_MS = 3_600_000;
const FETCH_TIMEOUT_MS = 5_000;
const MAX_JWKS_BYTES = 256 * 1024;

/**
 * The keys of trusted issuers (docs/api.md §17), by issuer and JWKS address: fetched under
 * the webhook address rules (upstreamFetch: https only, public addresses only unless
 * WEBHOOKS_ALLOW_PRIVATE_NETWORKS, no redirects, a timeout and a size limit), kept in
 * memory (RemoteJwks) so that a token costs no network call, fetched again for an unknown
 * `kid` at most once every UNKNOWN_KID_REFETCH_MS. With no key known (never fetched, or
 * the JWKS unreachable), a token is refused: it fails closed.
 */
@Injectable()
export class IssuerKeys {
  private readonly sets = new Map<string, RemoteJwks>();
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
  async key(issuer: string, jwksUri: string | null, kid: string): Promise<RemoteKey> {
    let found: RemoteKey | null;
    try {
      found = await this.setOf(issuer, jwksUri).key(kid);
    } catch {
      throw new JwtRefused('jwks_unavailable', "The issuer's keys could not be fetched, and none is known.");
    }
    if (!found) {
      throw new JwtRefused('unknown_kid', "The token's key id is not among the issuer's keys.");
    }
    return found;
  }

  /** Fetches the issuer's keys now (saving a trust does, so its first token pays no fetch). */
  async prefetch(issuer: string, jwksUri: string | null): Promise<void> {
    await this.setOf(issuer, jwksUri).refresh();
  }

  private setOf(issuer: string, jwksUri: string | null): RemoteJwks {
    const id = `${issuer}\n${jwksUri ?? ''}`;
    let set = this.sets.get(id);
    if (!set) {
      set = new RemoteJwks(async () => this.json(jwksUri ?? (await this.discover(issuer))), {
        unknownKidRefetchMs: UNKNOWN_KID_REFETCH_MS,
        ttlMs: KEYS_TTL_MS,
      });
      this.sets.set(id, set);
    }
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
