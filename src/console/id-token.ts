import type { JsonWebKey } from 'node:crypto';
import {
  algorithmsFor,
  checkClaims,
  decodeJwt,
  JWT_ALGORITHMS,
  JwtRefused,
  verifySignature,
  type JwtAlgorithm,
  type JwtClaims,
} from '../common/jwt';
import { publicKeyFromJwk } from '../common/jwk';

export interface IdTokenExpectations {
  issuer: string;
  /** The service's client id at the provider. */
  audience: string;
  /** What the provider's discovery document says it signs with, within the allowlist. */
  algorithms: readonly JwtAlgorithm[];
  /** The sign-in's nonce: the token must carry it. */
  nonce: string;
  /** Seconds since the epoch (default: now). */
  now?: number;
}

/**
 * An OpenID Connect ID token (docs/api.md §13, single sign-on), verified with the JWT
 * rules every token of the service follows (src/common/jwt.ts) and OpenID Connect's own:
 * a key of the provider's JWKS (by `kid` when the header names one; `unknown_kid` lets the
 * caller read the JWKS once more), `iat` required, `azp` naming the client when `aud`
 * names several, and the sign-in's `nonce`.
 */
export function verifyIdToken(token: string, keys: readonly JsonWebKey[], expect: IdTokenExpectations): JwtClaims {
  const decoded = decodeJwt(token);
  const { alg, kid } = decoded.header;
  if (!expect.algorithms.includes(alg)) {
    throw new JwtRefused('alg_not_allowed', `The provider does not sign ID tokens with ${alg}.`);
  }
  const candidates = keys.flatMap((jwk) => {
    const key = kid === undefined || jwk.kid === kid ? publicKeyFromJwk(jwk, JWT_ALGORITHMS) : null;
    return key && algorithmsFor(key).includes(alg) && (jwk.alg === undefined || jwk.alg === alg)
      ? [{ key, alg: jwk.alg as string | undefined }]
      : [];
  });
  if (candidates.length === 0) {
    throw new JwtRefused('unknown_kid', `No key of the provider's JWKS for kid ${kid ?? '(none)'} and ${alg}.`);
  }
  const verified = candidates.some(({ key, alg: keyAlg }) => {
    try {
      verifySignature(decoded, key, keyAlg);
      return true;
    } catch {
      return false;
    }
  });
  if (!verified) {
    throw new JwtRefused('bad_signature', 'The ID token signature does not verify.');
  }
  const { claims } = decoded;
  // checkClaims also refuses an `iat` in the future; OpenID Connect requires one.
  checkClaims(decoded, { issuer: expect.issuer, audience: expect.audience, now: expect.now });
  if (typeof claims.iat !== 'number') {
    throw new JwtRefused('malformed', 'The ID token has no numeric `iat`.');
  }
  if (Array.isArray(claims.aud) && claims.aud.length > 1 && claims.azp !== expect.audience) {
    throw new JwtRefused('wrong_audience', 'The ID token names several audiences and `azp` is not this client.');
  }
  if (claims.nonce !== expect.nonce) {
    throw new JwtRefused('wrong_nonce', "The ID token's nonce is not the one this sign-in sent.");
  }
  return claims;
}
