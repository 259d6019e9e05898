import { createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import { badRequest } from './app-error';
import type { CodeWithStatus } from './error-codes';

/*
 * JWK → public key, for every signature the service checks: tokens (jwt.ts, with its
 * narrow allowlist) and upstreams' Agent Cards (src/upstream/card-verification.ts, with
 * all of these). Each caller names the algorithms it accepts; a key is usable when it
 * fits one of them.
 */

/** The asymmetric JWS algorithms (RFC 7518 §3.1, RFC 8037, RFC 9864): key pairs only, never `none` or HMAC. */
export const JWS_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
] as const;
export type JwsAlgorithm = (typeof JWS_ALGORITHMS)[number];

const RSA = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'] as const;
const RSA_PSS = ['PS256', 'PS384', 'PS512'] as const;
/** RSA keys under this many bits sign nothing (RFC 7518 §3.3). */
const MIN_RSA_BITS = 2048;
const EC_CURVES: Record<string, readonly JwsAlgorithm[]> = {
  prime256v1: ['ES256'],
  secp384r1: ['ES384'],
  secp521r1: ['ES512'],
};

/** The algorithms of `allowed` that `key` (public or private) signs with; none when it fits none of them. */
export function keyAlgorithms<A extends JwsAlgorithm>(key: KeyObject, allowed: readonly A[]): A[] {
  return fitting(key).filter((alg): alg is A => (allowed as readonly JwsAlgorithm[]).includes(alg));
}

function fitting(key: KeyObject): readonly JwsAlgorithm[] {
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return bits >= MIN_RSA_BITS ? RSA : [];
    case 'rsa-pss':
      return bits >= MIN_RSA_BITS ? RSA_PSS : [];
    case 'ec':
      return EC_CURVES[key.asymmetricKeyDetails?.namedCurve ?? ''] ?? [];
    case 'ed25519':
      return ['EdDSA', 'Ed25519'];
    default:
      return [];
  }
}

/**
 * The public key of a JWK; null when it is not a signing key (`use` other than `sig`,
 * `key_ops` without `verify`) or fits none of `allowed`. Private members are ignored.
 */
export function publicKeyFromJwk(jwk: JsonWebKey, allowed: readonly JwsAlgorithm[]): KeyObject | null {
  if (jwk.use !== undefined && jwk.use !== 'sig') {
    return null;
  }
  const ops: unknown = (jwk as { key_ops?: unknown }).key_ops;
  if (ops !== undefined && !(Array.isArray(ops) && ops.includes('verify'))) {
    return null;
  }
  try {
    const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...publicPart } = jwk;
    const key = createPublicKey({ key: publicPart, format: 'jwk' });
    return keyAlgorithms(key, allowed).length > 0 ? key : null;
  } catch {
    return null;
  }
}

/** The most keys a JWK Set given to the service holds (a trust's `jwks`, an upstream's `trusted_keys`). */
const MAX_JWK_SET_KEYS = 20;
/** JWK members that only a private (or symmetric) key has. */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];
/** The members of a public signing key that are kept of a key given (RFC 7517 §4, RFC 7518 §6): no others are stored. */
const PUBLIC_MEMBERS = ['kty', 'crv', 'x', 'y', 'n', 'e', 'kid', 'alg', 'use', 'key_ops'] as const;

/** How a caller checks a JWK Set it is given, and how it refuses one. */
export interface JwkSetRules {
  /** The algorithms a key must fit (and its own `alg`, if any, must be one of). */
  algorithms: readonly JwsAlgorithm[];
  /** Whether each key must name its `kid`. */
  kidRequired: boolean;
  /** The field the set was given as, and the 400's code. */
  field: string;
  code: CodeWithStatus<400>;
  /** The most characters the set may take as JSON. */
  maxLength?: number;
}

/** A key of a checked set: its public members only, and the key. */
export interface CheckedJwk {
  jwk: JsonWebKey & { kid?: string; alg?: string };
  key: KeyObject;
}

/**
 * A JWK Set given to the service (a trusted issuer's inline `jwks`, an upstream's
 * `trusted_keys` or the set at its `trusted_jwks_uri`): 1 to 20 public signing keys of
 * `rules.algorithms` — EC, OKP or RSA, never a private or symmetric key, a `kid` (if any)
 * of 1 to 200 characters; each key kept with its public members only. Anything else is a
 * 400 `rules.code` naming `rules.field`.
 */
export function checkJwkSet(value: unknown, rules: JwkSetRules): CheckedJwk[] {
  const refuse = (why: string) => {
    const message = `${rules.field}: ${why}.`;
    return badRequest(rules.code, message, [{ field: rules.field, message }]);
  };
  const keys = (value as { keys?: unknown } | null)?.keys;
  if (typeof value !== 'object' || value === null || Array.isArray(value) || !Array.isArray(keys)) {
    throw refuse('must be a JWK Set, {"keys": [...]}');
  }
  if (rules.maxLength !== undefined && JSON.stringify(value).length > rules.maxLength) {
    throw refuse(`must be at most ${rules.maxLength / 1024} KiB as JSON`);
  }
  if (keys.length === 0 || keys.length > MAX_JWK_SET_KEYS) {
    throw refuse(`must hold 1 to ${MAX_JWK_SET_KEYS} keys`);
  }
  return (keys as unknown[]).map((key) => {
    if (typeof key !== 'object' || key === null || Array.isArray(key)) {
      throw refuse('every key must be a JWK object');
    }
    const given = key as Record<string, unknown>;
    if (!['EC', 'OKP', 'RSA'].includes(String(given.kty))) {
      throw refuse('keys must be EC, OKP or RSA public keys');
    }
    if (PRIVATE_MEMBERS.some((member) => member in given)) {
      throw refuse('a private or symmetric key was given; public keys only');
    }
    const kid = given.kid;
    if ((rules.kidRequired || kid !== undefined) && (typeof kid !== 'string' || kid.length === 0 || kid.length > 200)) {
      throw refuse(`${rules.kidRequired ? 'every key must have' : 'a kid must be'} a kid of 1 to 200 characters`);
    }
    const jwk = Object.fromEntries(
      PUBLIC_MEMBERS.filter((member) => given[member] !== undefined).map((member) => [member, given[member]]),
    ) as CheckedJwk['jwk'];
    // A key of a kind none of the algorithms takes, or whose own `alg` it does not fit.
    const publicKey = publicKeyFromJwk(jwk, rules.algorithms);
    const fits: readonly string[] = publicKey ? keyAlgorithms(publicKey, rules.algorithms) : [];
    if (!publicKey || (jwk.alg !== undefined && !fits.includes(jwk.alg))) {
      throw refuse(`${typeof kid === 'string' ? `key ${kid}` : 'a key'} is not a usable public signing key`);
    }
    return { jwk, key: publicKey };
  });
}
