import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { FlattenedSign } from 'jose';
import { canonicalCardPayload } from '../directory/card-canonical';
import { keyIdsNamed, parseTrustedKeys, verifyCard } from './card-verification';

const CARD = { name: 'Upstream', description: 'Bridged agent.', version: '1' };

async function signed(card: object, alg: string, privateKey: KeyObject, kid = 'k1') {
  const jws = await new FlattenedSign(Buffer.from(canonicalCardPayload(card)))
    .setProtectedHeader({ alg, kid })
    .sign(privateKey);
  return { ...card, signatures: [{ protected: jws.protected, signature: jws.signature }] };
}

const pin = (publicKey: KeyObject, extra: object = {}) =>
  parseTrustedKeys({ keys: [{ ...publicKey.export({ format: 'jwk' }), kid: 'k1', ...extra }] });

/** Card algorithms reach wider than a token's (ES384, RS384, PS*, Ed25519): each key converts and verifies. */
describe('upstream card verification', () => {
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  it.each<[string, { publicKey: KeyObject; privateKey: KeyObject }]>([
    ['ES256', generateKeyPairSync('ec', { namedCurve: 'P-256' })],
    ['ES384', generateKeyPairSync('ec', { namedCurve: 'P-384' })],
    ['ES512', generateKeyPairSync('ec', { namedCurve: 'P-521' })],
    ['RS384', rsa],
    ['PS512', rsa],
    ['EdDSA', generateKeyPairSync('ed25519')],
    ['Ed25519', generateKeyPairSync('ed25519')],
  ])('verifies a card signed %s with the pinned key', async (alg, pair) => {
    const card = await signed(CARD, alg, pair.privateKey);
    expect(await verifyCard(card, await pin(pair.publicKey))).toEqual({ status: 'verified', kid: 'k1', error: null });
    expect(await verifyCard({ ...card, description: 'Tampered.' }, await pin(pair.publicKey))).toMatchObject({
      status: 'failed',
    });
  });

  it('fails a signature whose algorithm the pinned key does not fit', async () => {
    const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' });
    const card = await signed(CARD, 'ES384', p384.privateKey);
    const p256 = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    expect(await verifyCard(card, await pin(p256.publicKey))).toMatchObject({
      status: 'failed',
      error: 'no signature verifies with a pinned key',
    });
  });

  it('refuses to pin a key no card algorithm takes, or one its own alg does not fit', async () => {
    const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' }).publicKey;
    await expect(pin(p384, { alg: 'ES384' })).resolves.toHaveLength(1);
    await expect(pin(p384, { alg: 'ES256' })).rejects.toMatchObject({ code: 'invalid_trusted_keys' });
    await expect(pin(rsa.publicKey, { alg: 'RSA-OAEP' })).rejects.toMatchObject({ code: 'invalid_trusted_keys' });
    for (const publicKey of [
      generateKeyPairSync('ec', { namedCurve: 'secp256k1' }).publicKey,
      generateKeyPairSync('ed448').publicKey,
    ]) {
      await expect(pin(publicKey)).rejects.toMatchObject({ code: 'invalid_trusted_keys' });
    }
  });

  it('names the kids of the signatures', async () => {
    const { privateKey } = generateKeyPairSync('ed25519');
    const card = await signed(CARD, 'EdDSA', privateKey, 'k2');
    expect(keyIdsNamed(card)).toEqual(['k2']);
    expect(keyIdsNamed(CARD)).toEqual([]);
    expect(keyIdsNamed({ signatures: [{ protected: 'not json' }, null] })).toEqual([]);
  });
});
