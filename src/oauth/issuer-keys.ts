import { Inject, Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { checkJwkSet } from '../common/jwk';
import { JWT_ALGORITHMS, JwtRefused } from '../common/jwt';
import { parseJwks, RemoteJwks, TRUSTED_JWKS_RULES, type RemoteKey } from '../common/remote-jwks';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { trustedJwksFetch } from '../upstream/trusted-jwks-fetch';
/** Inline key sets kept parsed (one per trust), so that a token's next request checks no signature again. */
const INLINE_SETS = 1_000;
/** The most a trust's inline `jwks` may take as JSON: 20 keys with room to spare. */
const MAX_INLINE_JWKS_LENGTH = 64 * 1024;

/**
 * A trust's inline `jwks` as saved: a JWK Set of 1 to 20 public signing keys of the
 * token algorithms, each with its `kid` (a token names the key it was signed with), at
 * most 64 KiB as JSON, kept with their public members only; else a 400 on the field `jwks`.
 */
export function checkInlineJwks(value: unknown): { keys: object[] } {
  const keys = checkJwkSet(value, {
    algorithms: JWT_ALGORITHMS,
    kidRequired: true,
    field: 'jwks',
    code: 'validation_failed',
    maxLength: MAX_INLINE_JWKS_LENGTH,
  });
  return { keys: keys.map((key) => key.jwk) };
}

/** A trust's inline key set, as the text it is stored as. */
export interface InlineJwks {
  trustId: string;
  jwks: string;
}

/**
 * The keys of trusted issuers (docs/api.md §17), by issuer and JWKS address: fetched under
 * the webhook address rules (trustedJwksFetch), kept in memory (RemoteJwks) so that a
 * token costs no network call, fetched again for an unknown `kid` at most once every
 * 30 s (TRUSTED_JWKS_RULES). With no key known (never fetched, or
 * the JWKS unreachable), a token is refused: it fails closed. A trust's inline `jwks`
 * is never fetched: its keys are parsed once per trust and kept by the set's hash, so a
 * changed set is new keys on the very next request.
 */
@Injectable()
export class IssuerKeys {
  private readonly sets = new Map<string, RemoteJwks>();
  /** Trust id → its inline set's hash and keys. */
  private readonly inline = new Map<string, { hash: string; keys: RemoteKey[] }>();
  private readonly json: (uri: string) => Promise<unknown>;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.json = trustedJwksFetch(config.webhooksAllowPrivateNetworks);
  }

  /**
   * The issuer's key `kid` — of `inline` (a trust's inline set) when given, else
   * fetched; refuses with `unknown_kid` or `jwks_unavailable`.
   */
  async key(issuer: string, jwksUri: string | null, kid: string, inline: InlineJwks | null = null): Promise<RemoteKey> {
    let found: RemoteKey | null;
    try {
      found =
        inline === null
          ? await this.setOf(issuer, jwksUri).key(kid)
          : (this.inlineKeys(inline).find((key) => key.kid === kid) ?? null);
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

  /** Forgets a trust's parsed inline keys (its keys changed, or it was removed). */
  forgetInline(trustId: string): void {
    this.inline.delete(trustId);
  }

  private inlineKeys({ trustId, jwks }: InlineJwks): RemoteKey[] {
    const hash = createHash('sha256').update(jwks).digest('base64url');
    const held = this.inline.get(trustId);
    if (held?.hash === hash) {
      return held.keys;
    }
    const keys = parseJwks(JSON.parse(jwks)) ?? [];
    this.inline.delete(trustId);
    if (this.inline.size >= INLINE_SETS) {
      this.inline.delete(this.inline.keys().next().value!);
    }
    this.inline.set(trustId, { hash, keys });
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
