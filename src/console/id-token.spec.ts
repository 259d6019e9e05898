import { constants, createHmac, generateKeyPairSync, sign, type JsonWebKey, type KeyObject } from 'node:crypto';
import { JWT_ALGORITHMS, JwtRefused, type JwtAlgorithm } from '../common/jwt';
import { verifyIdToken, type IdTokenExpectations } from './id-token';

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

function keyPair(alg: JwtAlgorithm): { privateKey: KeyObject; jwk: JsonWebKey } {
  const { privateKey, publicKey } =
    alg === 'ES256'
      ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
      : alg === 'EdDSA'
        ? generateKeyPairSync('ed25519')
        : generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { privateKey, jwk: { ...publicKey.export({ format: 'jwk' }), kid: `k-${alg}` } };
}

function signJwt(alg: string, key: KeyObject, claims: object, header: object = {}): string {
  const input = `${b64({ alg, kid: `k-${alg}`, ...header })}.${b64(claims)}`;
  const data = Buffer.from(input);
  const signature =
    alg === 'PS256'
      ? sign('sha256', data, { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 })
      : alg === 'ES256'
        ? sign('sha256', data, { key, dsaEncoding: 'ieee-p1363' })
        : alg === 'EdDSA'
          ? sign(null, data, key)
          : sign('sha256', data, key);
  return `${input}.${signature.toString('base64url')}`;
}

const NOW = 1_800_000_000;
const EXPECT: IdTokenExpectations = {
  issuer: 'https://id.test',
  audience: 'client',
  algorithms: JWT_ALGORITHMS,
  nonce: 'n1',
  now: NOW,
};
const CLAIMS = { iss: 'https://id.test', aud: 'client', sub: 'u1', iat: NOW - 10, exp: NOW + 300, nonce: 'n1' };
const pairs = Object.fromEntries(JWT_ALGORITHMS.map((alg) => [alg, keyPair(alg)])) as Record<
  JwtAlgorithm,
  ReturnType<typeof keyPair>
>;
const jwks = JWT_ALGORITHMS.map((alg) => pairs[alg].jwk);

function reason(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof JwtRefused) {
      return error.reason;
    }
    throw error;
  }
  return 'accepted';
}

describe('verifyIdToken', () => {
  it.each(JWT_ALGORITHMS)('accepts a %s token signed by a key of the JWKS, with its nonce', (alg) => {
    const token = signJwt(alg, pairs[alg].privateKey, CLAIMS);
    expect(verifyIdToken(token, jwks, { ...EXPECT, nonce: 'n1' })).toMatchObject({ sub: 'u1' });
  });

  it('refuses none, HMAC and algorithms outside the allow-list', () => {
    const none = `${b64({ alg: 'none' })}.${b64(CLAIMS)}.AA`;
    const input = `${b64({ alg: 'HS256', kid: 'k-RS256' })}.${b64(CLAIMS)}`;
    const hmac = `${input}.${createHmac('sha256', 'secret').update(input).digest('base64url')}`;
    expect(reason(() => verifyIdToken(none, jwks, EXPECT))).toBe('alg_not_allowed');
    expect(reason(() => verifyIdToken(hmac, jwks, EXPECT))).toBe('alg_not_allowed');
    const rs = signJwt('RS256', pairs.RS256.privateKey, CLAIMS);
    expect(reason(() => verifyIdToken(rs, jwks, { ...EXPECT, algorithms: ['ES256'] }))).toBe('alg_not_allowed');
  });

  it('refuses an unknown kid, a key of another type, and a signature by another key', () => {
    const token = signJwt('ES256', pairs.ES256.privateKey, CLAIMS, { kid: 'rotated' });
    expect(reason(() => verifyIdToken(token, jwks, EXPECT))).toBe('unknown_kid');
    const asRsa = signJwt('RS256', pairs.RS256.privateKey, CLAIMS, { kid: 'k-ES256' });
    expect(reason(() => verifyIdToken(asRsa, jwks, EXPECT))).toBe('unknown_kid');
    const forged = signJwt('ES256', keyPair('ES256').privateKey, CLAIMS);
    expect(reason(() => verifyIdToken(forged, jwks, EXPECT))).toBe('bad_signature');
    const [h, , s] = signJwt('EdDSA', pairs.EdDSA.privateKey, CLAIMS).split('.');
    expect(reason(() => verifyIdToken(`${h}.${b64({ ...CLAIMS, sub: 'u2' })}.${s}`, jwks, EXPECT))).toBe(
      'bad_signature',
    );
  });

  it('checks iss, aud (azp with several), exp, iat and nbf with bounded skew, and the nonce', () => {
    const check = (claims: object, extra: object = {}) =>
      reason(() => verifyIdToken(signJwt('ES256', pairs.ES256.privateKey, claims), jwks, { ...EXPECT, ...extra }));
    expect(check({ ...CLAIMS, iss: 'https://other.test' })).toBe('wrong_issuer');
    expect(check({ ...CLAIMS, aud: 'other' })).toBe('wrong_audience');
    expect(check({ ...CLAIMS, aud: ['client', 'other'] })).toBe('wrong_audience');
    expect(check({ ...CLAIMS, aud: ['client', 'other'], azp: 'client' })).toBe('accepted');
    expect(check({ ...CLAIMS, exp: NOW - 61 })).toBe('expired');
    expect(check({ ...CLAIMS, exp: NOW - 30 })).toBe('accepted');
    expect(check({ ...CLAIMS, iat: NOW + 61 })).toBe('not_yet_valid');
    expect(check({ ...CLAIMS, nbf: NOW + 61 })).toBe('not_yet_valid');
    expect(check({ ...CLAIMS, exp: undefined })).toBe('malformed');
    expect(check({ ...CLAIMS, iat: undefined })).toBe('malformed');
    expect(check(CLAIMS, { nonce: 'n2' })).toBe('wrong_nonce');
  });

  it('refuses what is not a compact JWS of JSON objects', () => {
    for (const token of [
      '',
      'a.b',
      'a.b.c.d',
      '!!.e30.',
      `${b64([1])}.${b64(CLAIMS)}.`,
      `e30.${'x'.repeat(20_000)}.`,
    ]) {
      expect(reason(() => verifyIdToken(token, jwks, EXPECT))).toBe('malformed');
    }
  });
});
