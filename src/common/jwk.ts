import { createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';

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
