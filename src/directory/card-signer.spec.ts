import { generateKeyPairSync } from 'node:crypto';
import type { AppConfig } from '../config/config';
import type { Database } from '../database/database';
import type { Logger } from 'pino';
import { CardSigner } from './card-signer';
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
