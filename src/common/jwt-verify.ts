import { constants, createPublicKey, verify, type JsonWebKey, type KeyObject } from 'node:crypto';

/**
 * Verifying a signed JWT (a JWS in compact form) with node:crypto alone: the signature
 * against a key of a JWKS, then the registered claims. Key pairs only — `none` and the
 * HMAC algorithms are never accepted, whatever the header says.
 */

export const ASYMMETRIC_ALGS = ['RS256', 'PS256', 'ES256', 'EdDSA'] as const;
export type JwtAlg = (typeof ASYMMETRIC_ALGS)[number];

export type JwtClaims = Record<string, unknown> & {
  iss?: unknown;
  sub?: unknown;
  aud?: unknown;
  exp?: unknown;
  iat?: unknown;
  nbf?: unknown;
  nonce?: unknown;
};

/** Why a token was refused, for the log (never the token). */
export class JwtError extends Error {
  constructor(
    readonly reason:
      | 'malformed'
      | 'alg_not_allowed'
      | 'unknown_kid'
      | 'bad_signature'
      | 'wrong_issuer'
      | 'wrong_audience'
      | 'expired'
      | 'not_yet_valid'
      | 'wrong_nonce'
      | 'missing_claim',
    message: string,
  ) {
    super(message);
  }
}

export interface JwtExpectations {
  issuer: string;
  audience: string;
  /** The algorithms accepted (a subset of ASYMMETRIC_ALGS). */
  algorithms: readonly JwtAlg[];
  /** Clock skew allowed on exp, nbf and iat, in seconds. */
  skewSeconds: number;
  /** When set, the `nonce` claim must equal it. */
  nonce?: string;
  /** Now, in seconds since the epoch. */
  now?: number;
}

export interface DecodedJwt {
  header: { alg?: unknown; kid?: unknown; typ?: unknown };
  claims: JwtClaims;
  signingInput: Buffer;
  signature: Buffer;
}

const B64URL = /^[A-Za-z0-9_-]*$/;

function part(text: string): Buffer {
  if (!B64URL.test(text)) {
    throw new JwtError('malformed', 'not base64url');
  }
  return Buffer.from(text, 'base64url');
}

function json(buffer: Buffer): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(buffer.toString('utf8'));
  } catch {
    throw new JwtError('malformed', 'not JSON');
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw new JwtError('malformed', 'not a JSON object');
  }
  return value as Record<string, unknown>;
}

/** The token's parts, not yet verified. */
export function decodeJwt(token: string): DecodedJwt {
  const parts = token.split('.');
  if (parts.length !== 3 || token.length > 16_384) {
    throw new JwtError('malformed', 'not a compact JWS');
  }
  return {
    header: json(part(parts[0])),
    claims: json(part(parts[1])),
    signingInput: Buffer.from(`${parts[0]}.${parts[1]}`, 'ascii'),
    signature: part(parts[2]),
  };
}

/** Whether a JWK can verify tokens of `alg` (its type and curve fit; a `use`/`alg` on it agree). */
export function keyFits(jwk: JsonWebKey, alg: JwtAlg): boolean {
  if ((jwk.use !== undefined && jwk.use !== 'sig') || (jwk.alg !== undefined && jwk.alg !== alg)) {
    return false;
  }
  switch (alg) {
    case 'RS256':
    case 'PS256':
      return jwk.kty === 'RSA';
    case 'ES256':
      return jwk.kty === 'EC' && jwk.crv === 'P-256';
    case 'EdDSA':
      return jwk.kty === 'OKP' && jwk.crv === 'Ed25519';
  }
}

/** Whether `signature` over `input` is valid for `key` under `alg`. */
function signatureValid(alg: JwtAlg, key: KeyObject, input: Buffer, signature: Buffer): boolean {
  try {
    switch (alg) {
      case 'RS256':
        return verify('sha256', input, key, signature);
      case 'PS256':
        return verify(
          'sha256',
          input,
          { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST },
          signature,
        );
      case 'ES256':
        return verify('sha256', input, { key, dsaEncoding: 'ieee-p1363' }, signature);
      case 'EdDSA':
        return verify(null, input, key, signature);
    }
  } catch {
    return false;
  }
}

const isTime = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);

/**
 * Verifies `token`: its `alg` is allowed, a key of `keys` (by `kid` when the header has
 * one) verifies its signature, then iss, aud (a string or an array holding the audience;
 * with several, `azp` must be the audience), exp, nbf and iat (bounded skew) and the
 * nonce. `keys` are the JWKS's keys; an unknown kid is `unknown_kid`, so that the
 * caller may fetch the JWKS again once.
 */
export function verifyJwt(token: string, keys: readonly JsonWebKey[], expect: JwtExpectations): JwtClaims {
  const { header, claims, signingInput, signature } = decodeJwt(token);
  const alg = header.alg;
  if (typeof alg !== 'string' || !(expect.algorithms as readonly string[]).includes(alg)) {
    throw new JwtError('alg_not_allowed', `alg ${String(alg)} is not accepted`);
  }
  const kid = typeof header.kid === 'string' ? header.kid : undefined;
  const candidates = keys.filter((jwk) => (kid === undefined || jwk.kid === kid) && keyFits(jwk, alg as JwtAlg));
  if (candidates.length === 0) {
    throw new JwtError('unknown_kid', `no key for kid ${kid ?? '(none)'} and alg ${alg}`);
  }
  const verified = candidates.some((jwk) => {
    let key: KeyObject;
    try {
      key = createPublicKey({ key: jwk, format: 'jwk' });
    } catch {
      return false;
    }
    return signatureValid(alg as JwtAlg, key, signingInput, signature);
  });
  if (!verified) {
    throw new JwtError('bad_signature', 'the signature does not verify');
  }
  checkClaims(claims, expect);
  return claims;
}

function checkClaims(claims: JwtClaims, expect: JwtExpectations): void {
  const now = expect.now ?? Math.floor(Date.now() / 1000);
  const skew = expect.skewSeconds;
  if (claims.iss !== expect.issuer) {
    throw new JwtError('wrong_issuer', 'iss is not the expected issuer');
  }
  const audiences = typeof claims.aud === 'string' ? [claims.aud] : Array.isArray(claims.aud) ? claims.aud : [];
  if (!audiences.includes(expect.audience)) {
    throw new JwtError('wrong_audience', 'aud does not name this client');
  }
  if (audiences.length > 1 && claims.azp !== expect.audience) {
    throw new JwtError('wrong_audience', 'several audiences and azp is not this client');
  }
  if (!isTime(claims.exp) || !isTime(claims.iat)) {
    throw new JwtError('missing_claim', 'exp and iat are required');
  }
  if (claims.exp <= now - skew) {
    throw new JwtError('expired', 'the token has expired');
  }
  if (claims.iat > now + skew || (claims.nbf !== undefined && (!isTime(claims.nbf) || claims.nbf > now + skew))) {
    throw new JwtError('not_yet_valid', 'the token is not valid yet');
  }
  if (expect.nonce !== undefined && claims.nonce !== expect.nonce) {
    throw new JwtError('wrong_nonce', 'the nonce is not the one this sign-in sent');
  }
}
