import { Inject, Injectable } from '@nestjs/common';
import { badRequest } from '../common/app-error';
import { publicKeyFromJwk } from '../common/jwk';
import { JWT_ALGORITHMS, JwtRefused } from '../common/jwt';
import { parseJwks, RemoteJwks, TRUSTED_JWKS_RULES, type RemoteKey } from '../common/remote-jwks';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { trustedJwksFetch } from '../upstream/trusted-jwks-fetch';
/** Inline key sets kept parsed (by their text), so that a token's next request checks no signature again. */
const INLINE_SETS = 1_000;
const MAX_INLINE_KEYS = 20;
/** JWK members that only a private (or symmetric) key has. */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

/**
 * A trust's inline `jwks` as saved: a JWK Set of 1 to 20 public signing keys, each with
 * its `kid` (a token names the key it was signed with); else a 400 on the field `jwks`.
 */
export function checkInlineJwks(value: unknown): { keys: object[] } {
  const refuse = (why: string) => {
    const message = `jwks ${why}`;
    return badRequest('validation_failed', message, [{ field: 'jwks', message }]);
  };
  const keys = (value as { keys?: unknown } | null)?.keys;
  if (typeof value !== 'object' || value === null || Array.isArray(value) || !Array.isArray(keys)) {
    throw refuse('must be a JWK Set, {"keys": [...]}');
  }
  if (keys.length === 0 || keys.length > MAX_INLINE_KEYS) {
    throw refuse(`must hold 1 to ${MAX_INLINE_KEYS} keys`);
  }
  for (const key of keys as unknown[]) {
    if (typeof key !== 'object' || key === null || Array.isArray(key)) {
      throw refuse('must hold JWK objects');
    }
    const jwk = key as Record<string, unknown>;
    if (PRIVATE_MEMBERS.some((member) => member in jwk)) {
      throw refuse('must hold public keys only (a private or symmetric key was given)');
    }
    if (typeof jwk.kid !== 'string' || jwk.kid.length === 0 || jwk.kid.length > 200) {
      throw refuse('keys must each have a kid of 1 to 200 characters');
    }
    if (!publicKeyFromJwk(jwk, JWT_ALGORITHMS)) {
      throw refuse(`key ${jwk.kid} is not a usable RSA, P-256 or Ed25519 signing key`);
    }
  }
  return { keys: keys as object[] };
}

/**
 * The keys of trusted issuers (docs/api.md §17), by issuer and JWKS address: fetched under
 * the webhook address rules (trustedJwksFetch), kept in memory (RemoteJwks) so that a
 * token costs no network call, fetched again for an unknown `kid` at most once every
 * 30 s (TRUSTED_JWKS_RULES). With no key known (never fetched, or
 * the JWKS unreachable), a token is refused: it fails closed. A trust's inline `jwks`
 * is never fetched: its keys are parsed once, by the text of the set, so a changed set is
 * new keys on the very next request.
 */
@Injectable()
export class IssuerKeys {
  private readonly sets = new Map<string, RemoteJwks>();
  private readonly inline = new Map<string, RemoteKey[]>();
  private readonly json: (uri: string) => Promise<unknown>;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.json = trustedJwksFetch(config.webhooksAllowPrivateNetworks);
  }

  /**
   * The issuer's key `kid` — of `jwks` (a trust's inline set, as text) when given, else
   * fetched; refuses with `unknown_kid` or `jwks_unavailable`.
   */
  async key(issuer: string, jwksUri: string | null, kid: string, jwks: string | null = null): Promise<RemoteKey> {
    let found: RemoteKey | null;
    try {
      found =
        jwks === null
          ? await this.setOf(issuer, jwksUri).key(kid)
          : (this.inlineKeys(jwks).find((key) => key.kid === kid) ?? null);
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

  /** Forgets the keys fetched for an issuer and address (a trust changed them or was removed). */
  forget(issuer: string, jwksUri: string | null): void {
    this.sets.delete(`${issuer}\n${jwksUri ?? ''}`);
  }

  private inlineKeys(jwks: string): RemoteKey[] {
    let keys = this.inline.get(jwks);
    if (!keys) {
      keys = parseJwks(JSON.parse(jwks)) ?? [];
      if (this.inline.size >= INLINE_SETS) {
        this.inline.delete(this.inline.keys().next().value!);
      }
      this.inline.set(jwks, keys);
    }
    return keys;
  }

  private setOf(issuer: string, jwksUri: string | null): RemoteJwks {
    const id = `${issuer}\n${jwksUri ?? ''}`;
    let set = this.sets.get(id);
    if (!set) {
      set = new RemoteJwks(
        async () => this.json(jwksUri ?? (await this.discover(issuer))),
        TRUSTED_JWKS_RULES,
        parseJwks,
      );
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
}
