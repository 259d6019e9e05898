import { createPrivateKey, createPublicKey, verify } from 'node:crypto';
import pino from 'pino';
import { signJwt } from '../../src/common/jwt';
import { CardSigner } from '../../src/directory/card-signer';
import { startApp, type TestApp } from '../support/app';
import { agentPair, rpc, v03Message, type Agent } from '../support/a2a';
import { apiKey, bearer, mintAdminKey, signup, type ConsoleAccount } from '../support/fixtures';
import { logEntries } from '../support/log-entries';

/** docs/api.md §17: client credentials for API keys, bearer access tokens, the metadata. */
describe('OAuth access tokens', () => {
  let t: TestApp;
  let acme: ConsoleAccount;
  let requester: Agent;
  let worker: Agent;
  let adminKey: string;
  const logs: Array<Record<string, unknown>> = [];

  beforeAll(async () => {
    t = await startApp({ LOG_LEVEL: 'info' }, undefined, pino({ level: 'info' }, logEntries(logs)));
    ({ acme, requester, worker } = await agentPair(t));
    adminKey = await mintAdminKey(t, acme);
  });
  afterAll(() => t.close());

  const keyId = async (key: string) => (await t.http().get('/api-keys/self').set(apiKey(key)).expect(200)).body.id;
  const form = (fields: Record<string, string>) =>
    t.http().post('/oauth/token').type('form').send(new URLSearchParams(fields).toString());
  async function tokenFor(key: string): Promise<string> {
    const res = await form({ grant_type: 'client_credentials', client_id: await keyId(key), client_secret: key });
    expect(res.status).toBe(200);
    return res.body.access_token;
  }
  const segment = (token: string, i: number) => JSON.parse(Buffer.from(token.split('.')[i], 'base64url').toString());

  it('serves RFC 8414 metadata pointing at the token endpoint and the JWKS', async () => {
    const res = await t.http().get('/.well-known/oauth-authorization-server').expect(200);
    expect(res.body).toMatchObject({
      issuer: t.config.publicBaseUrl,
      token_endpoint: `${t.config.publicBaseUrl}/oauth/token`,
      jwks_uri: `${t.config.publicBaseUrl}/.well-known/jwks.json`,
      grant_types_supported: ['client_credentials', 'urn:ietf:params:oauth:grant-type:token-exchange'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    });
  });

  it('issues an RFC 9068 JWT for a key, in the form or with HTTP Basic, verifiable with the JWKS', async () => {
    const id = await keyId(requester.key);
    const res = await form({ grant_type: 'client_credentials', client_id: id, client_secret: requester.key }).expect(
      200,
    );
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toEqual({
      access_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: 600,
      scope: 'agent',
    });
    const token: string = res.body.access_token;
    const header = segment(token, 0);
    const claims = segment(token, 1);
    expect(header).toMatchObject({ typ: 'at+jwt', alg: 'ES256', kid: expect.any(String) });
    expect(claims).toMatchObject({
      iss: t.config.publicBaseUrl,
      aud: t.config.publicBaseUrl,
      sub: id,
      client_id: id,
      scope: 'agent',
      jti: expect.any(String),
    });
    expect(claims.exp - claims.iat).toBe(600);
    const jwks = (await t.http().get('/.well-known/jwks.json').expect(200)).body.keys;
    const jwk = jwks.find((k: { kid: string }) => k.kid === header.kid);
    const [h, c, s] = token.split('.');
    const valid = verify(
      'sha256',
      Buffer.from(`${h}.${c}`),
      {
        key: createPublicKey({ key: jwk, format: 'jwk' }),
        dsaEncoding: 'ieee-p1363',
      },
      Buffer.from(s, 'base64url'),
    );
    expect(valid).toBe(true);

    const basic = Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(requester.key)}`).toString('base64');
    const viaBasic = await t
      .http()
      .post('/oauth/token')
      .set('Authorization', `Basic ${basic}`)
      .type('form')
      .send('grant_type=client_credentials&scope=agent')
      .expect(200);
    expect(viaBasic.body.scope).toBe('agent');
  });

  it('acts with exactly the key: its identity on the protocol, its scope everywhere', async () => {
    const agentToken = await tokenFor(requester.key);
    const self = await t.http().get('/api-keys/self').set('Authorization', `Bearer ${agentToken}`).expect(200);
    expect(self.body).toMatchObject({ id: await keyId(requester.key), scope: 'agent' });
    const sent = await t
      .http()
      .post(`/a2a/${worker.handle}`)
      .set('Authorization', `Bearer ${agentToken}`)
      .send({
        jsonrpc: '2.0',
        id: 1,
        method: 'message/send',
        params: { message: v03Message('hi'), configuration: { blocking: false } },
      })
      .expect(200);
    expect(sent.body.result.id).toEqual(expect.any(String));
    const task = await t.http().get(`/api/v1/tasks/${sent.body.result.id}`).set(apiKey(adminKey)).expect(200);
    expect(JSON.stringify(task.body)).toContain(requester.handle);
    // An agent token may not mint keys, as its key may not.
    await t.http().post('/api/v1/api-keys').set('Authorization', `Bearer ${agentToken}`).send({}).expect(403);

    const adminToken = await tokenFor(adminKey);
    const refused = await t
      .http()
      .post(`/a2a/${worker.handle}`)
      .set('Authorization', `Bearer ${adminToken}`)
      .send({
        jsonrpc: '2.0',
        id: 1,
        method: 'message/send',
        params: { message: v03Message('hi'), configuration: { blocking: false } },
      })
      .expect(403);
    expect(refused.body.error.data.reason).toBe('admin_key_not_allowed');
    await t.http().get('/api/v1/api-keys').set('Authorization', `Bearer ${adminToken}`).expect(200);
  });

  it('ends the tokens of a revoked or expired key on the very next request', async () => {
    const account = await signup(t);
    const revoked = await mintAdminKey(t, account);
    const token = await tokenFor(revoked);
    await t.http().get('/api/v1/api-keys').set('Authorization', `Bearer ${token}`).expect(200);
    await t.http().post('/api-keys/self/revoke').set(apiKey(revoked)).expect(200);
    const res = await t.http().get('/api/v1/api-keys').set('Authorization', `Bearer ${token}`).expect(401);
    expect(res.body).toMatchObject({ code: 'invalid_token', detail: expect.stringMatching(/^key_revoked: /) });
    expect(res.headers['www-authenticate']).toMatch(/^Bearer error="invalid_token"/);
    await form({ grant_type: 'client_credentials', client_id: await keyIdOf(revoked), client_secret: revoked }).expect(
      401,
    );

    const expiring = await mintAdminKey(t, account);
    const second = await tokenFor(expiring);
    await t.db.query(`UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1`, [
      await keyIdOf(expiring),
    ]);
    const expired = await t.http().get('/api/v1/api-keys').set('Authorization', `Bearer ${second}`).expect(401);
    expect(expired.body.code).toBe('api_key_expired');
  });

  /** A key's id from the database (the key itself can no longer read it once revoked). */
  async function keyIdOf(key: string): Promise<string> {
    const [row] = await t.db.query(`SELECT id FROM api_keys WHERE prefix = $1`, [key.slice(0, 12)]);
    return row.id;
  }

  it('answers the token endpoint errors of RFC 6749 §5.2', async () => {
    const id = await keyId(requester.key);
    const cases: Array<[Record<string, string>, number, string]> = [
      [{ client_id: id, client_secret: requester.key }, 400, 'invalid_request'],
      [{ grant_type: 'password', client_id: id, client_secret: requester.key }, 400, 'unsupported_grant_type'],
      [{ grant_type: 'client_credentials', client_id: id, client_secret: adminKey }, 401, 'invalid_client'],
      [{ grant_type: 'client_credentials', client_id: id, client_secret: 'a2a_agt_nope' }, 401, 'invalid_client'],
      [{ grant_type: 'client_credentials', client_id: id }, 401, 'invalid_client'],
      [
        { grant_type: 'client_credentials', client_id: id, client_secret: requester.key, scope: 'admin' },
        400,
        'invalid_scope',
      ],
    ];
    for (const [fields, status, error] of cases) {
      const res = await form(fields);
      expect({ fields, status: res.status, error: res.body.error }).toEqual({ fields, status, error });
      expect(res.body.error_description).toEqual(expect.any(String));
      expect(res.headers['cache-control']).toBe('no-store');
      if (status === 401) {
        expect(res.headers['www-authenticate']).toMatch(/^Basic /);
      }
    }
    const json = await t.http().post('/oauth/token').send({ grant_type: 'client_credentials' }).expect(415);
    expect(json.body.error).toBe('invalid_request');
    const twice = await t.http().post('/oauth/token').type('form').send('grant_type=client_credentials&grant_type=x');
    expect(twice.status).toBe(400);
    expect(twice.body.error).toBe('invalid_request');
  });

  it('refuses forged, altered and malformed bearer tokens with typed 401s, logging none of them', async () => {
    const token = await tokenFor(requester.key);
    const [h, c, s] = token.split('.');
    const claims = segment(token, 1);
    const [{ private_key_pem: pem }] = await t.db.query(
      `SELECT private_key_pem FROM card_signing_keys WHERE status = 'current'`,
    );
    const serviceKey = createPrivateKey(pem);
    const kid = segment(token, 0).kid;
    const resign = (change: object, header: object = {}) =>
      signJwt({ alg: 'ES256', kid, typ: 'at+jwt', ...header }, { ...claims, ...change }, serviceKey);
    const now = Math.floor(Date.now() / 1000);
    const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const cases: Array<[string, string]> = [
      [`${h}.${b64({ ...claims, scope: 'admin' })}.${s}`, 'bad_signature'],
      [`${b64({ alg: 'none', typ: 'at+jwt' })}.${c}.AA`, 'alg_not_allowed'],
      [`${b64({ alg: 'HS256', typ: 'at+jwt', kid })}.${c}.${s}`, 'alg_not_allowed'],
      [resign({}, { kid: 'unknown' }), 'unknown_kid'],
      [resign({ aud: 'https://elsewhere.test' }), 'wrong_audience'],
      [resign({ exp: now - 120 }), 'expired'],
      [resign({ nbf: now + 600 }), 'not_yet_valid'],
      [resign({}, { typ: 'JWT' }), 'wrong_type'],
      ['a.b.c', 'malformed'],
      [resign({ iss: 'https://elsewhere.test' }), 'wrong_issuer'],
    ];
    for (const [forged, reason] of cases) {
      const res = await t.http().get('/api-keys/self').set('Authorization', `Bearer ${forged}`);
      expect({ reason, status: res.status, code: res.body.code, detail: res.body.detail?.split(':')[0] }).toEqual({
        reason,
        status: 401,
        code: 'invalid_token',
        detail: reason,
      });
    }
    // The same on the protocol endpoint (its 401 reason is `unauthenticated`, as for keys).
    const rpcRes = await t
      .http()
      .post(`/a2a/${worker.handle}`)
      .set('Authorization', `Bearer ${cases[0][0]}`)
      .send({
        jsonrpc: '2.0',
        id: 1,
        method: 'message/send',
        params: { message: v03Message('hi'), configuration: { blocking: false } },
      })
      .expect(401);
    expect(rpcRes.body.error.data.reason).toBe('unauthenticated');
    const logged = JSON.stringify(logs);
    for (const secret of [token, s, ...cases.map(([forged]) => forged.split('.')[2]).filter((x) => x.length > 8)]) {
      expect(logged).not.toContain(secret);
    }
    expect(logs.length).toBeGreaterThan(0);
  });

  it('keeps Console sessions on Authorization: Bearer working beside tokens', async () => {
    await t.http().get('/api/v1/console/me').set(bearer(acme)).expect(200);
    await rpc(t, worker.handle, requester.key, 'message/send', {
      message: v03Message('still a key'),
      configuration: { blocking: false },
    }).expect(200);
  });

  it('beside an X-API-Key, the key is the credential: an invalid one is a 401, the token no fallback', async () => {
    const token = await tokenFor(requester.key);
    const res = await t
      .http()
      .get('/api-keys/self')
      .set('Authorization', `Bearer ${token}`)
      .set('X-API-Key', 'a2a_agt_not-a-key')
      .expect(401);
    expect(res.body.code).toBe('invalid_api_key');
  });

  it('a token verified before is refused once its signing key is no longer published', async () => {
    const token = await tokenFor(requester.key);
    await t.http().get('/api-keys/self').set('Authorization', `Bearer ${token}`).expect(200);
    const signer = t.app.get(CardSigner);
    await signer.rotate();
    // One rotation keeps the previous key published: the token still verifies.
    await t.http().get('/api-keys/self').set('Authorization', `Bearer ${token}`).expect(200);
    await signer.rotate();
    const res = await t.http().get('/api-keys/self').set('Authorization', `Bearer ${token}`).expect(401);
    expect([res.body.code, res.body.detail.split(':')[0]]).toEqual(['invalid_token', 'unknown_kid']);
    await t
      .http()
      .get('/api-keys/self')
      .set('Authorization', `Bearer ${await tokenFor(requester.key)}`)
      .expect(200);
  });

  it("a trusted issuer's addresses follow the webhook address rules: https and public addresses only", async () => {
    const trust = (issuer: string, jwksUri?: string) =>
      t
        .http()
        .post('/api/v1/trusted-issuers')
        .set(apiKey(adminKey))
        .send({ issuer, jwks_uri: jwksUri, audience: 'address-rules', subjects: { s: requester.handle } });
    // The error names the field at fault.
    for (const [issuer, jwksUri, field] of [
      ['http://issuer.example', undefined, 'issuer'],
      ['https://10.0.0.1', undefined, 'issuer'],
      ['https://issuer.example', 'https://127.0.0.1/jwks.json', 'jwks_uri'],
      ['https://issuer.example', 'http://issuer.example/jwks.json', 'jwks_uri'],
    ]) {
      const res = await trust(issuer!, jwksUri);
      expect([issuer, jwksUri, res.status, res.body.code, res.body.errors]).toEqual([
        issuer,
        jwksUri,
        400,
        'invalid_issuer_url',
        [{ field, message: expect.stringMatching(new RegExp(`^${field} `)) }],
      ]);
    }
  });
});
