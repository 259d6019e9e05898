import { generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import type { AppError } from './app-error';
import type { CodeWithStatus } from './error-codes';
import { checkJwkSet, JWS_ALGORITHMS, keyAlgorithms, publicKeyFromJwk, type JwsAlgorithm } from './jwk';
import { JWT_ALGORITHMS } from './jwt';

type Pair = { publicKey: KeyObject; privateKey: KeyObject };

const pairs: Record<string, Pair> = {
  'P-256': generateKeyPairSync('ec', { namedCurve: 'P-256' }),
  'P-384': generateKeyPairSync('ec', { namedCurve: 'P-384' }),
  'P-521': generateKeyPairSync('ec', { namedCurve: 'P-521' }),
  secp256k1: generateKeyPairSync('ec', { namedCurve: 'secp256k1' }),
  Ed25519: generateKeyPairSync('ed25519'),
  Ed448: generateKeyPairSync('ed448'),
  'RSA 2048': generateKeyPairSync('rsa', { modulusLength: 2048 }),
  'RSA 1024': generateKeyPairSync('rsa', { modulusLength: 1024 }),
};
const jwkOf = (name: string) => pairs[name].publicKey.export({ format: 'jwk' });

/** One conversion for tokens (JWT_ALGORITHMS) and upstreams' cards (all of JWS_ALGORITHMS): the caller's set decides. */
describe('publicKeyFromJwk', () => {
  it.each<[string, JwsAlgorithm[], JwsAlgorithm[]]>([
    ['P-256', ['ES256'], ['ES256']],
    ['P-384', ['ES384'], []],
    ['P-521', ['ES512'], []],
    ['Ed25519', ['EdDSA', 'Ed25519'], ['EdDSA']],
    ['RSA 2048', ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'], ['RS256', 'PS256']],
    ['secp256k1', [], []],
    ['Ed448', [], []],
    ['RSA 1024', [], []],
  ])('a %s key signs %j of a card’s algorithms, %j of a token’s', (name, forCards, forTokens) => {
    const card = publicKeyFromJwk(jwkOf(name), JWS_ALGORITHMS);
    const token = publicKeyFromJwk(jwkOf(name), JWT_ALGORITHMS);
    expect(card ? keyAlgorithms(card, JWS_ALGORITHMS) : []).toEqual(forCards);
    expect(token ? keyAlgorithms(token, JWT_ALGORITHMS) : []).toEqual(forTokens);
    if (card) {
      // The key is the JWK's: it verifies what the private key signed.
      const digest = name.startsWith('Ed') ? null : 'sha384';
      const signature = sign(digest, Buffer.from('card'), pairs[name].privateKey);
      expect(verify(digest, Buffer.from('card'), card, signature)).toBe(true);
      expect(card.type).toBe('public');
    }
  });

  it('takes the algorithms the caller allows, no more', () => {
    expect(publicKeyFromJwk(jwkOf('P-384'), ['ES384'])).not.toBeNull();
    expect(publicKeyFromJwk(jwkOf('P-384'), ['ES256', 'ES512'])).toBeNull();
    expect(publicKeyFromJwk(jwkOf('RSA 2048'), ['PS512'])).not.toBeNull();
    expect(publicKeyFromJwk(jwkOf('Ed25519'), ['RS256'])).toBeNull();
  });

  it('takes no key that is not for signatures, or not a key pair’s; and the public part of a private one', () => {
    const jwk = jwkOf('P-256');
    expect(publicKeyFromJwk({ ...jwk, use: 'enc' }, JWS_ALGORITHMS)).toBeNull();
    expect(publicKeyFromJwk({ ...jwk, use: 'sig' }, JWS_ALGORITHMS)).not.toBeNull();
    expect(publicKeyFromJwk({ ...jwk, key_ops: ['encrypt'] } as typeof jwk, JWS_ALGORITHMS)).toBeNull();
    expect(publicKeyFromJwk({ ...jwk, key_ops: ['verify'] } as typeof jwk, JWS_ALGORITHMS)).not.toBeNull();
    expect(publicKeyFromJwk({ kty: 'oct', k: 'c2VjcmV0' }, JWS_ALGORITHMS)).toBeNull();
    expect(publicKeyFromJwk({ kty: 'EC', crv: 'P-256', x: 'AA', y: 'AA' }, JWS_ALGORITHMS)).toBeNull();
    const fromPrivate = publicKeyFromJwk(pairs['RSA 2048'].privateKey.export({ format: 'jwk' }), JWT_ALGORITHMS);
    expect(fromPrivate?.type).toBe('public');
  });
});

/** One check of a JWK Set given to the service, for trusts' inline `jwks` and upstreams' `trusted_keys`. */
describe('checkJwkSet', () => {
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const publicJwk = { ...ec.publicKey.export({ format: 'jwk' }), kid: 'k1' };
  const rules = {
    algorithms: ['ES256', 'EdDSA'] as const,
    kidRequired: true,
    field: 'jwks',
    code: 'validation_failed' as CodeWithStatus<400>,
    maxLength: 1024,
  };
  const refusal = (value: unknown, over: Partial<typeof rules> = {}) => {
    try {
      checkJwkSet(value, { ...rules, ...over });
    } catch (error) {
      return { code: (error as AppError).code, field: (error as AppError).extra.errors?.[0]?.field };
    }
    return null;
  };

  it('keeps the public members of each key only', () => {
    const [checked] = checkJwkSet({ keys: [{ ...publicJwk, use: 'sig', x5c: ['MII…'], note: 'extra' }] }, rules);
    expect(checked.jwk).toEqual({ ...publicJwk, use: 'sig' });
    expect(checked.key.asymmetricKeyType).toBe('ec');
  });

  it('refuses with the caller’s code and field', () => {
    const privateJwk = { ...ec.privateKey.export({ format: 'jwk' }), kid: 'k1' };
    const cases: unknown[] = [
      null,
      [],
      { keys: 'x' },
      { keys: [] },
      { keys: Array.from({ length: 21 }, (_, i) => ({ ...publicJwk, kid: `k${i}` })) },
      { keys: [privateJwk] },
      { keys: [{ kty: 'oct', k: 'c2VjcmV0', kid: 'h' }] },
      { keys: [{ ...publicJwk, kid: undefined }] },
      { keys: [{ ...publicJwk, kid: 'x'.repeat(201) }] },
      { keys: [{ ...publicJwk, alg: 'RS256' }] },
      { keys: [{ ...publicJwk, x5c: ['A'.repeat(2000)] }] }, // over maxLength
    ];
    for (const value of cases) {
      expect(refusal(value)).toEqual({ code: 'validation_failed', field: 'jwks' });
    }
    expect(refusal({ keys: [privateJwk] }, { field: 'trusted_keys', code: 'invalid_trusted_keys' })).toEqual({
      code: 'invalid_trusted_keys',
      field: 'trusted_keys',
    });
    // A kid is optional where the caller says so, and then only checked when given.
    expect(refusal({ keys: [{ ...publicJwk, kid: undefined }] }, { kidRequired: false })).toBeNull();
    expect(refusal({ keys: [{ ...publicJwk, kid: '' }] }, { kidRequired: false })).not.toBeNull();
  });
});
