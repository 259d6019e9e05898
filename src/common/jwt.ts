import { constants, sign, verify, type KeyObject } from 'node:crypto';
import { keyAlgorithms, type JwsAlgorithm } from './jwk';

/*
 * JSON Web Tokens (RFC 7519) in compact JWS form (RFC 7515), on node:crypto alone: the
 * service's access tokens (docs/api.md §17), the JWTs of trusted issuers and the Console's
 * ID tokens (src/console/id-token.ts, docs/api.md §13). Small on
 * purpose: only asymmetric algorithms of an explicit allowlist, a key whose type fits
 * the algorithm, and the registered claims checked with a bounded clock skew. Every
 * refusal carries a typed reason; none repeats the token.
 */

/** The algorithms a token may be signed with: key pairs only (no `none`, no HMAC), fewer than a card's (jwk.ts). */
export const JWT_ALGORITHMS = ['RS256', 'PS256', 'ES256', 'EdDSA'] as const satisfies readonly JwsAlgorithm[];
export type JwtAlgorithm = (typeof JWT_ALGORITHMS)[number];

/** How far the clocks of issuer and service may disagree on `exp` and `nbf`. */
export const CLOCK_SKEW_SECONDS = 60;

/** Why a token is refused (docs/api.md §17). */
export type JwtRefusal =
  | 'malformed'
  | 'alg_not_allowed'
  | 'wrong_type'
  | 'unknown_kid'
  | 'bad_signature'
  | 'wrong_issuer'
  | 'wrong_audience'
  | 'expired'
  | 'not_yet_valid'
  | 'wrong_nonce'
  | 'jwks_unavailable';

export class JwtRefused extends Error {
  constructor(
    readonly reason: JwtRefusal,
    message: string,
  ) {
    super(message);
  }
}

export interface JwtHeader {
  alg: string;
  kid?: string;
  typ?: string;
  [name: string]: unknown;
}

export interface JwtClaims {
  iss?: string;
  sub?: string;
  aud?: string | string[];
  exp?: number;
  nbf?: number;
  iat?: number;
  jti?: string;
  [name: string]: unknown;
}

/** A token split and parsed, its signature not checked yet. */
export interface DecodedJwt {
  header: JwtHeader & { alg: JwtAlgorithm };
  claims: JwtClaims;
  signingInput: Buffer;
  signature: Buffer;
}

const SEGMENT = /^[A-Za-z0-9_-]+$/;
/**
 * The longest JWT read, bearer or subject token (docs/api.md §17): longer than any token
 * this service signs or a workload presents, and what an `Authorization` header holds
 * within common proxies' 8 KiB header limits. A longer one is refused before it is parsed
 * and never kept (TokenVerifier's signature cache).
 */
export const MAX_JWT_LENGTH = 8 * 1024;

/** Whether a bearer credential has a JWT's shape (three dot-separated segments), as a Console session token never has. */
export function looksLikeJwt(token: string): boolean {
  return token.split('.', 4).length === 3;
}

/** Parses a compact JWS; refuses a malformed one or one whose `alg` is not on the allowlist. */
export function decodeJwt(token: string): DecodedJwt {
  if (token.length > MAX_JWT_LENGTH) {
    throw new JwtRefused('malformed', `The token is longer than ${MAX_JWT_LENGTH} characters.`);
  }
  const parts = token.split('.');
  if (parts.length !== 3 || !parts.every((part) => SEGMENT.test(part))) {
    throw new JwtRefused('malformed', 'The token is not a compact JWS (three base64url segments).');
  }
  const header = parseSegment(parts[0]);
  const claims = parseSegment(parts[1]);
  if (!header || !claims || typeof header.alg !== 'string') {
    throw new JwtRefused('malformed', 'The token header or claims are not a JSON object.');
  }
  const alg = header.alg;
  if (!(JWT_ALGORITHMS as readonly string[]).includes(alg)) {
    const why =
      alg.toLowerCase() === 'none'
        ? 'an unsigned token (alg "none") is never accepted'
        : /^HS/i.test(alg)
          ? 'an HMAC-signed token is refused where a key pair is expected'
          : `alg "${alg.slice(0, 16)}" is not accepted`;
    throw new JwtRefused(
      'alg_not_allowed',
      `The token's signature algorithm is refused: ${why} (${JWT_ALGORITHMS.join(', ')}).`,
    );
  }
  if (header.kid !== undefined && typeof header.kid !== 'string') {
    throw new JwtRefused('malformed', 'The token header `kid` is not a string.');
  }
  return {
    header: header as DecodedJwt['header'],
    claims: claims as JwtClaims,
    signingInput: Buffer.from(`${parts[0]}.${parts[1]}`),
    signature: Buffer.from(parts[2], 'base64url'),
  };
}

function parseSegment(segment: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/** The algorithms of the allowlist a public or private key signs with (none when it fits none). */
export function algorithmsFor(key: KeyObject): JwtAlgorithm[] {
  return keyAlgorithms(key, JWT_ALGORITHMS);
}

function signatureOptions(alg: JwtAlgorithm, key: KeyObject) {
  switch (alg) {
    case 'RS256':
      return { digest: 'sha256', key: { key } };
    case 'PS256':
      return {
        digest: 'sha256',
        key: { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST },
      };
    case 'ES256':
      return { digest: 'sha256', key: { key, dsaEncoding: 'ieee-p1363' as const } };
    case 'EdDSA':
      return { digest: null, key: { key } };
  }
}

/** Signs `claims` with a private key (its algorithm must fit the key): a compact JWS. */
export function signJwt(header: JwtHeader & { alg: JwtAlgorithm }, claims: JwtClaims, key: KeyObject): string {
  const { protected: encodedHeader, signature } = signJws(header, JSON.stringify(claims), key);
  return `${encodedHeader}.${base64url(JSON.stringify(claims))}.${signature}`;
}

/**
 * A JWS signature of `payload` (RFC 7515 §5.1) with a private key (its algorithm must fit
 * the key): the protected header and the signature, base64url — a flattened JWS without
 * its payload, as a card's `signatures` hold it. node:crypto signs synchronously, at a
 * third of the cost of a WebCrypto signature (jose's), which a directory page pays per card.
 */
export function signJws(
  header: JwtHeader & { alg: JwtAlgorithm },
  payload: string,
  key: KeyObject,
): { protected: string; signature: string } {
  if (!algorithmsFor(key).includes(header.alg)) {
    throw new Error(`A ${key.asymmetricKeyType} key does not sign ${header.alg}`);
  }
  const encodedHeader = base64url(JSON.stringify(header));
  const { digest, key: options } = signatureOptions(header.alg, key);
  const signature = sign(digest, Buffer.from(`${encodedHeader}.${base64url(payload)}`), options);
  return { protected: encodedHeader, signature: signature.toString('base64url') };
}

function base64url(text: string): string {
  return Buffer.from(text).toString('base64url');
}

/**
 * Checks the signature with `key`; refuses a key whose type does not fit the header's
 * algorithm, or whose JWK names another `alg` (`keyAlg`).
 */
export function verifySignature(token: DecodedJwt, key: KeyObject, keyAlg?: string): void {
  const alg = token.header.alg;
  if (!algorithmsFor(key).includes(alg) || (keyAlg !== undefined && keyAlg !== alg)) {
    throw new JwtRefused(
      'alg_not_allowed',
      `The token's algorithm ${alg} does not fit the issuer's key ${token.header.kid ?? ''}.`.trimEnd(),
    );
  }
  const { digest, key: options } = signatureOptions(alg, key);
  let valid = false;
  try {
    valid = verify(digest, token.signingInput, options, token.signature);
  } catch {
    valid = false;
  }
  if (!valid) {
    throw new JwtRefused('bad_signature', 'The token signature does not verify.');
  }
}

export interface ClaimRules {
  issuer: string;
  /** The audience the token must name (in `aud`, a string or a list). */
  audience: string;
  /** Accepted `typ` headers, compared without case and an `application/` prefix; none: any. */
  types?: readonly string[];
  /** Seconds since the epoch (default: now). */
  now?: number;
  skewSeconds?: number;
}

/** Checks `typ`, `iss`, `aud`, `exp` (required) and `nbf` (bounded skew). */
export function checkClaims(
  token: Pick<DecodedJwt, 'header' | 'claims'> | { header: JwtHeader; claims: JwtClaims },
  rules: ClaimRules,
): void {
  const { header, claims } = token;
  if (rules.types) {
    const typ = typeof header.typ === 'string' ? header.typ.toLowerCase().replace(/^application\//, '') : '';
    if (!rules.types.includes(typ)) {
      throw new JwtRefused('wrong_type', `The token type must be one of: ${rules.types.join(', ')}.`);
    }
  }
  if (claims.iss !== rules.issuer) {
    throw new JwtRefused('wrong_issuer', 'The token was issued by another issuer than expected.');
  }
  const audiences = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
  if (!audiences.includes(rules.audience)) {
    throw new JwtRefused('wrong_audience', `The token's audience is not ${rules.audience}.`);
  }
  const now = rules.now ?? Math.floor(Date.now() / 1000);
  const skew = rules.skewSeconds ?? CLOCK_SKEW_SECONDS;
  if (typeof claims.exp !== 'number') {
    throw new JwtRefused('malformed', 'The token has no numeric `exp`.');
  }
  if (claims.exp + skew <= now) {
    throw new JwtRefused('expired', 'The token has expired.');
  }
  if (claims.nbf !== undefined && (typeof claims.nbf !== 'number' || claims.nbf - skew > now)) {
    throw new JwtRefused('not_yet_valid', 'The token is not valid yet (`nbf`).');
  }
  if (typeof claims.iat === 'number' && claims.iat - skew > now) {
    throw new JwtRefused('not_yet_valid', 'The token was issued in the future (`iat`).');
  }
}
