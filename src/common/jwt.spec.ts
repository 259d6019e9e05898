import { generateKeyPairSync, createHmac, type KeyObject } from 'node:crypto';
import {
  checkClaims,
  decodeJwt,
  JWT_ALGORITHMS,
  JwtRefused,
  signJwt,
  verifySignature,
  type ClaimRules,
  type JwtAlgorithm,
  type JwtRefusal,
} from './jwt';
import { publicKeyFromJwk } from './jwk';

const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const ed = generateKeyPairSync('ed25519');
const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const NOW = 1_800_000_000;
const RULES: ClaimRules = {
  issuer: 'https://issuer.test',
  audience: 'https://service.test',
  now: NOW,
  types: ['at+jwt'],
};
const CLAIMS = { iss: RULES.issuer, aud: RULES.audience, sub: 'k', iat: NOW, exp: NOW + 600 };

function refusal(action: () => void): JwtRefusal | 'accepted' {
  try {
    action();
    return 'accepted';
  } catch (error) {
    if (error instanceof JwtRefused) {
      return error.reason;
    }
    throw error;
  }
}

/** Decodes, verifies with `key` and checks claims: the whole path a bearer token takes. */
function accept(token: string, key: KeyObject = ec.publicKey, rules: ClaimRules = RULES): JwtRefusal | 'accepted' {
  return refusal(() => {
    const decoded = decodeJwt(token);
    verifySignature(decoded, key);
    checkClaims(decoded, rules);
  });
}

const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('jwt', () => {
  it.each<[JwtAlgorithm, KeyObject, KeyObject]>([
    ['ES256', ec.privateKey, ec.publicKey],
    ['EdDSA', ed.privateKey, ed.publicKey],
    ['RS256', rsa.privateKey, rsa.publicKey],
    ['PS256', rsa.privateKey, rsa.publicKey],
  ])('signs and verifies %s', (alg, privateKey, publicKey) => {
    const token = signJwt({ alg, typ: 'at+jwt', kid: 'k1' }, CLAIMS, privateKey);
    expect(accept(token, publicKey)).toBe('accepted');
    expect(decodeJwt(token).claims).toEqual(CLAIMS);
  });

  it('accepts a JWK public key, and an application/ prefix on typ', () => {
    const key = publicKeyFromJwk(ec.publicKey.export({ format: 'jwk' }), JWT_ALGORITHMS)!;
    const token = signJwt({ alg: 'ES256', typ: 'application/at+jwt' }, CLAIMS, ec.privateKey);
    expect(accept(token, key)).toBe('accepted');
  });

  it('refuses a malformed token', () => {
    expect(accept('not-a-jwt')).toBe('malformed');
    expect(accept('a.b')).toBe('malformed');
    expect(accept(`${b64({ alg: 'ES256' })}.bm90IGpzb24.c2ln`)).toBe('malformed');
    expect(accept(`${b64({ alg: 'ES256' })}.${b64(CLAIMS)}.s!g`)).toBe('malformed');
    expect(accept(`${b64([1])}.${b64(CLAIMS)}.c2ln`)).toBe('malformed');
  });

  it('refuses alg "none"', () => {
    expect(accept(`${b64({ alg: 'none' })}.${b64(CLAIMS)}.`)).toBe('malformed'); // empty signature segment
    expect(accept(`${b64({ alg: 'none' })}.${b64(CLAIMS)}.AA`)).toBe('alg_not_allowed');
  });

  it('refuses an HMAC token where a key pair is expected (even keyed with the public key)', () => {
    const input = `${b64({ alg: 'HS256', typ: 'at+jwt' })}.${b64(CLAIMS)}`;
    const pem = ec.publicKey.export({ format: 'pem', type: 'spki' });
    const token = `${input}.${createHmac('sha256', pem).update(input).digest('base64url')}`;
    expect(accept(token)).toBe('alg_not_allowed');
  });

  it('refuses an algorithm that does not fit the key, or that the JWK does not name', () => {
    const token = signJwt({ alg: 'EdDSA', typ: 'at+jwt' }, CLAIMS, ed.privateKey);
    expect(accept(token, ec.publicKey)).toBe('alg_not_allowed');
    const rs = signJwt({ alg: 'RS256', typ: 'at+jwt' }, CLAIMS, rsa.privateKey);
    expect(refusal(() => verifySignature(decodeJwt(rs), rsa.publicKey, 'PS256'))).toBe('alg_not_allowed');
  });

  it('refuses a bad signature', () => {
    const other = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const token = signJwt({ alg: 'ES256', typ: 'at+jwt' }, CLAIMS, other.privateKey);
    expect(accept(token)).toBe('bad_signature');
    const [h, , s] = signJwt({ alg: 'ES256', typ: 'at+jwt' }, CLAIMS, ec.privateKey).split('.');
    expect(accept(`${h}.${b64({ ...CLAIMS, sub: 'other' })}.${s}`)).toBe('bad_signature');
  });

  it('refuses a wrong issuer or audience', () => {
    const sign = (claims: object) => signJwt({ alg: 'ES256', typ: 'at+jwt' }, { ...CLAIMS, ...claims }, ec.privateKey);
    expect(accept(sign({ iss: 'https://elsewhere.test' }))).toBe('wrong_issuer');
    expect(accept(sign({ aud: 'https://elsewhere.test' }))).toBe('wrong_audience');
    expect(accept(sign({ aud: ['https://a.test', RULES.audience] }))).toBe('accepted');
  });

  it('refuses an expired token, or one not valid yet, within a bounded skew', () => {
    const sign = (claims: object) => signJwt({ alg: 'ES256', typ: 'at+jwt' }, { ...CLAIMS, ...claims }, ec.privateKey);
    expect(accept(sign({ exp: NOW - 61 }))).toBe('expired');
    expect(accept(sign({ exp: NOW - 59 }))).toBe('accepted');
    expect(accept(sign({ exp: undefined }))).toBe('malformed');
    expect(accept(sign({ nbf: NOW + 61 }))).toBe('not_yet_valid');
    expect(accept(sign({ nbf: NOW + 59 }))).toBe('accepted');
    expect(accept(sign({ iat: NOW + 120 }))).toBe('not_yet_valid');
  });

  it('refuses a token of another type where at+jwt is required', () => {
    expect(accept(signJwt({ alg: 'ES256', typ: 'JWT' }, CLAIMS, ec.privateKey))).toBe('wrong_type');
    expect(accept(signJwt({ alg: 'ES256' }, CLAIMS, ec.privateKey))).toBe('wrong_type');
    expect(accept(signJwt({ alg: 'ES256' }, CLAIMS, ec.privateKey), ec.publicKey, { ...RULES, types: undefined })).toBe(
      'accepted',
    );
  });

  it('takes no key from a JWK that signs no token algorithm, though a card may use it', () => {
    const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' });
    expect(publicKeyFromJwk(p384.publicKey.export({ format: 'jwk' }), JWT_ALGORITHMS)).toBeNull();
    const token = signJwt({ alg: 'ES256', typ: 'at+jwt' }, CLAIMS, ec.privateKey);
    expect(accept(token, p384.publicKey)).toBe('alg_not_allowed');
  });

  it('never repeats the token in a refusal', () => {
    const token = signJwt({ alg: 'ES256', typ: 'at+jwt' }, { ...CLAIMS, exp: NOW - 600 }, ec.privateKey);
    try {
      checkClaims(decodeJwt(token), RULES);
    } catch (error) {
      expect((error as Error).message).not.toContain(token.split('.')[2]);
    }
  });
});
