import { generateKeyPairSync, type JsonWebKey } from 'node:crypto';
import { RemoteJwks } from './remote-jwks';

/** The fetch rules a holder gives a remote JWK Set (IssuerKeys: 30 s; OidcClient: each unknown kid). */
describe('RemoteJwks', () => {
  const jwk = (kid: string): JsonWebKey => ({
    ...generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }),
    kid,
  });
  let published: JsonWebKey[];
  let fetches: number;
  let failing: boolean;
  const load = async () => {
    fetches += 1;
    if (failing) {
      throw new Error('unreachable');
    }
    return { keys: published };
  };
  beforeEach(() => {
    published = [jwk('k1')];
    fetches = 0;
    failing = false;
  });

  it('fetches once, and again for an unknown kid at most once per interval', async () => {
    const jwks = new RemoteJwks(load, { unknownKidRefetchMs: 60_000, ttlMs: Infinity });
    expect((await jwks.key('k1'))?.kid).toBe('k1');
    expect((await jwks.key('k1'))?.kid).toBe('k1');
    expect(fetches).toBe(1);
    published = [...published, jwk('k2')];
    expect(await jwks.key('k2')).toBeNull(); // fetched less than a minute ago
    expect(fetches).toBe(1);

    const every = new RemoteJwks(load, { unknownKidRefetchMs: 0, ttlMs: Infinity });
    expect((await every.key('k2'))?.kid).toBe('k2');
    expect(await every.key('k3')).toBeNull();
    expect(fetches).toBe(3);
  });

  it('with no set held, a failed fetch is thrown and not tried again within the interval; a held set outlives one', async () => {
    failing = true;
    const jwks = new RemoteJwks(load, { unknownKidRefetchMs: 60_000, ttlMs: Infinity });
    await expect(jwks.key('k1')).rejects.toThrow('unreachable');
    await expect(jwks.key('k1')).rejects.toThrow();
    expect(fetches).toBe(1);

    failing = false;
    const held = new RemoteJwks(load, { unknownKidRefetchMs: 0, ttlMs: Infinity });
    await held.keys();
    failing = true;
    expect(await held.key('k2')).toBeNull();
    expect((await held.key('k1'))?.kid).toBe('k1');
    expect(fetches).toBe(3);
  });
});
