import { generateKeyPairSync } from 'node:crypto';
import type { AppConfig } from '../config/config';
import type { Database } from '../database/database';
import type { Logger } from 'pino';
import { CardSigner, SIGNATURE_CACHE_SIZE } from './card-signer';
import type { DirectoryRepository } from './directory.repository';

describe('CardSigner.verificationKey', () => {
  it('requests arriving while the published keys are read share that one read', async () => {
    const publicJwk = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' });
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const publishedSigningKeys = jest.fn(async () => {
      await released;
      return [{ kid: 'k1', algorithm: 'ES256' as const, publicJwk }];
    });
    const signer = new CardSigner(
      {} as Database,
      { publishedSigningKeys } as unknown as DirectoryRepository,
      { publicBaseUrl: 'https://a2a.example' } as AppConfig,
      {} as Logger,
    );

    const pending = [signer.verificationKey('k1'), signer.verificationKey('k1'), signer.verificationKey('other')];
    release();
    const [first, second, other] = await Promise.all(pending);
    expect(publishedSigningKeys).toHaveBeenCalledTimes(1);
    expect(first?.alg).toBe('ES256');
    expect(second?.key).toBe(first?.key);
    expect(other).toBeNull();

    // A known kid is then answered from memory.
    expect((await signer.verificationKey('k1'))?.key).toBe(first?.key);
    expect(publishedSigningKeys).toHaveBeenCalledTimes(1);
  });
});

describe('CardSigner.sign', () => {
  it('keeps the signatures of the cards served last: a card served again outlives those served once before it', async () => {
    const signer = new CardSigner(
      { transaction: (work: (tx: unknown) => unknown) => work({}) } as unknown as Database,
      {
        lockSigningKeys: async () => undefined,
        currentSigningKey: async () => null,
        installSigningKey: async () => undefined,
      } as unknown as DirectoryRepository,
      { publicBaseUrl: 'https://a2a.example' } as AppConfig,
      { debug: () => undefined } as unknown as Logger,
    );
    await signer.onModuleInit();
    // ES256 signatures are randomized: a card signed anew gets another signature.
    const signatureOf = async (name: string) => (await signer.sign({ name, version: '1' })).signatures[0].signature;

    const first = await signatureOf('served again');
    const early = await signatureOf('served once');
    for (let n = 2; n < SIGNATURE_CACHE_SIZE; n++) {
      await signatureOf(`card ${n}`);
    }
    expect(await signatureOf('served again')).toBe(first);
    // One more card: the least recently served goes.
    await signatureOf('one more');
    expect(await signatureOf('served again')).toBe(first);
    expect(await signatureOf('served once')).not.toBe(early);
  });
});
