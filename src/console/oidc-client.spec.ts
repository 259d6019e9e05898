import { generateKeyPairSync, sign, type JsonWebKey, type KeyObject } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { loadConfig } from '../config/config';
import { OidcClient, OidcError } from './oidc-client';

/**
 * The relying party's caching of the provider's keys, against a small provider on
 * loopback whose keys the test rotates (the full flow runs against oidc-provider in
 * test/console/sso.e2e-spec.ts): the JWKS is read once, read again once when a token
 * names a key it does not hold, and a key still unknown then is refused.
 */
describe('OidcClient: discovery and the JWKS cache', () => {
  let server: Server;
  let issuer: string;
  let published: Array<{ key: KeyObject; jwk: JsonWebKey }> = [];
  let signer: { key: KeyObject; jwk: JsonWebKey };
  let discoveredIssuer: (issuer: string) => string = (issuer) => issuer;
  let jwksReads = 0;

  const keyPair = (kid: string) => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    return { key: privateKey, jwk: { ...publicKey.export({ format: 'jwk' }), kid } };
  };
  const idToken = (nonce: string) => {
    const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const now = Math.floor(Date.now() / 1000);
    const input = `${b64({ alg: 'ES256', kid: signer.jwk.kid })}.${b64({ iss: issuer, aud: 'client', sub: 's1', iat: now, exp: now + 60, nonce, email: 'a@b.test', email_verified: true })}`;
    return `${input}.${sign('sha256', Buffer.from(input), { key: signer.key, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
  };

  beforeAll(async () => {
    server = createServer((req, res) => {
      const json = (body: object) =>
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (req.url === '/.well-known/openid-configuration') {
        return json({
          issuer: discoveredIssuer(issuer),
          authorization_endpoint: `${issuer}/authorize`,
          token_endpoint: `${issuer}/token`,
          jwks_uri: `${issuer}/jwks`,
          id_token_signing_alg_values_supported: ['ES256'],
          code_challenge_methods_supported: ['S256'],
        });
      }
      if (req.url === '/jwks') {
        jwksReads += 1;
        return json({ keys: published.map((k) => k.jwk) });
      }
      if (req.url === '/token') {
        return json({ id_token: idToken('n1'), token_type: 'Bearer' });
      }
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    issuer = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  const client = () =>
    new OidcClient(
      loadConfig({
        CONSOLE_OIDC_ISSUER: issuer,
        CONSOLE_OIDC_CLIENT_ID: 'client',
        CONSOLE_OIDC_CLIENT_SECRET: 'secret',
      }),
    );

  it('reads the JWKS once, again once for a rotated key, and refuses a key still unknown', async () => {
    const first = keyPair('k1');
    published = [first];
    signer = first;
    jwksReads = 0;
    const rp = client();
    expect(await rp.signIn('code', 'verifier', 'n1')).toMatchObject({ sub: 's1', email: 'a@b.test' });
    expect(await rp.signIn('code', 'verifier', 'n1')).toMatchObject({ sub: 's1' });
    expect(jwksReads).toBe(1);

    const rotated = keyPair('k2');
    published = [first, rotated];
    signer = rotated;
    expect(await rp.signIn('code', 'verifier', 'n1')).toMatchObject({ sub: 's1' });
    expect(jwksReads).toBe(2);

    signer = keyPair('k3');
    await expect(rp.signIn('code', 'verifier', 'n1')).rejects.toThrow(/unknown_kid/);
    expect(jwksReads).toBe(3);
    await expect(rp.signIn('code', 'verifier', 'other nonce')).rejects.toThrow(OidcError);
  });

  it('refuses a discovery document that names another issuer', async () => {
    discoveredIssuer = () => 'https://impostor.test';
    try {
      await expect(client().authorizationUrl({ state: 's', nonce: 'n', codeChallenge: 'c' })).rejects.toThrow(
        'the discovery document names another issuer',
      );
    } finally {
      discoveredIssuer = (name) => name;
    }
  });
});
