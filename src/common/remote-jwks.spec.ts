import { generateKeyPairSync, type JsonWebKey } from 'node:crypto';
import { parseJwks, RemoteJwks } from './remote-jwks';

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
    const jwks = new RemoteJwks(load, { unknownKidRefetchMs: 60_000, ttlMs: Infinity }, parseJwks);
    expect((await jwks.key('k1'))?.kid).toBe('k1');
    expect((await jwks.key('k1'))?.kid).toBe('k1');
    expect(fetches).toBe(1);
    published = [...published, jwk('k2')];
    expect(await jwks.key('k2')).toBeNull(); // fetched less than a minute ago
    expect(fetches).toBe(1);

    const every = new RemoteJwks(load, { unknownKidRefetchMs: 0, ttlMs: Infinity }, parseJwks);
    expect((await every.key('k2'))?.kid).toBe('k2');
    expect(await every.key('k3')).toBeNull();
    expect(fetches).toBe(3);
  });

  it('with no set held, a failed fetch is thrown and not tried again within the interval; a held set outlives one', async () => {
    failing = true;
    const jwks = new RemoteJwks(load, { unknownKidRefetchMs: 60_000, ttlMs: Infinity }, parseJwks);
    await expect(jwks.key('k1')).rejects.toThrow('unreachable');
    await expect(jwks.key('k1')).rejects.toThrow('unreachable'); // the same failure, not fetched again
    expect(fetches).toBe(1);

    failing = false;
    const held = new RemoteJwks(load, { unknownKidRefetchMs: 0, ttlMs: Infinity }, parseJwks);
    await held.keys();
    failing = true;
    expect(await held.key('k2')).toBeNull();
    expect((await held.key('k1'))?.kid).toBe('k1');
    expect(fetches).toBe(3);
  });

  it("reads the set with the holder's parse, whose refusal is the fetch's failure", async () => {
    const parse = (body: unknown) => {
      const keys = (body as { keys: JsonWebKey[] }).keys;
      if (keys.length > 1) {
        throw new Error('too many keys');
      }
      return keys.map((key) => ({ kid: `pinned-${String(key.kid)}` }));
    };
    const jwks = new RemoteJwks(load, { unknownKidRefetchMs: 0, ttlMs: Infinity }, parse);
    expect(await jwks.key('pinned-k1')).toEqual({ kid: 'pinned-k1' });
    published = [...published, jwk('k2')];
    expect(await jwks.key('pinned-k2')).toBeNull(); // refused: the set held before serves
    await expect(jwks.refetch()).rejects.toThrow('too many keys');
    expect((await jwks.keys()).map((key) => key.kid)).toEqual(['pinned-k1']);
    expect(fetches).toBe(3);
  });
});
