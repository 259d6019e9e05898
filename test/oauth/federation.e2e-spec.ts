import { createHmac } from 'node:crypto';
import pino from 'pino';
import { startApp, type TestApp } from '../support/app';
import { agentPair, enabledAgent, reply, startBlocking, v03Message, type Agent } from '../support/a2a';
import { apiKey, bearer, mintAdminKey, signup, type ConsoleAccount } from '../support/fixtures';
import { logEntries } from '../support/log-entries';
import { Issuer, WORKLOAD_AUDIENCE, WORKLOAD_SUBJECT } from '../support/token-issuer';

const AUDIENCE = WORKLOAD_AUDIENCE;
const SUBJECT = WORKLOAD_SUBJECT;

/** docs/api.md §17: workload identity federation through trusted issuers. */
describe('trusted issuers', () => {
  let t: TestApp;
  let acme: ConsoleAccount;
  let requester: Agent;
  let worker: Agent;
  let issuer: Issuer;
  let trustId: string;
  const logs: Array<Record<string, unknown>> = [];

  beforeAll(async () => {
    // Loopback JWKS: allowed the way webhook tests allow loopback receivers.
    t = await startApp(
      { WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true', LOG_LEVEL: 'info' },
      undefined,
      pino({ level: 'info' }, logEntries(logs)),
    );
    ({ acme, requester, worker } = await agentPair(t));
    issuer = new Issuer();
    await issuer.start();
    issuer.add('k1');
    issuer.add('rsa', 'RS256');
    const res = await t
      .http()
      .post('/api/v1/trusted-issuers')
      .set(apiKey(await mintAdminKey(t, acme)))
      .send({
        issuer: issuer.url,
        jwks_uri: `${issuer.url}/jwks.json`,
        audience: AUDIENCE,
        subjects: { [SUBJECT]: requester.handle },
      })
      .expect(201);
    trustId = res.body.id;
    // Saving the trust fetches its keys (in the background): wait for it.
    for (let i = 0; i < 100 && issuer.fetches === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(res.body).toMatchObject({
      issuer: issuer.url,
      audience: AUDIENCE,
      subject_claim: 'sub',
      subjects: { [SUBJECT]: requester.handle },
    });
  });
  afterAll(async () => {
    jest.restoreAllMocks();
    await issuer.close();
    await t.close();
  });

  const send = (token: string) =>
    t
      .http()
      .post(`/a2a/${worker.handle}`)
      .set('Authorization', `Bearer ${token}`)
      .send({
        jsonrpc: '2.0',
        id: 1,
        method: 'message/send',
        params: { message: v03Message('hi'), configuration: { blocking: false } },
      });
  const refusal = async (token: string) => {
    const res = await t.http().get('/api/v1/tasks').set('Authorization', `Bearer ${token}`);
    return { status: res.status, code: res.body.code, reason: String(res.body.detail).split(':')[0] };
  };

  it('a mapped subject acts as its identity: the protocol and the ledger, with no JWKS fetch per request', async () => {
    const fetches = issuer.fetches;
    const sent = await send(issuer.token({})).expect(200);
    const [row] = await t.db.query(`SELECT requester_identity_id FROM tasks WHERE id = $1`, [sent.body.result.id]);
    expect(row.requester_identity_id).toBe(requester.id);
    await t
      .http()
      .get('/api/v1/tasks')
      .set('Authorization', `Bearer ${issuer.token({}, 'rsa')}`)
      .expect(200);
    // An agent's scope only: no admin route.
    await t
      .http()
      .get('/api/v1/api-keys')
      .set('Authorization', `Bearer ${issuer.token({})}`)
      .expect(403);
    expect(issuer.fetches).toBe(fetches); // fetched once, when the trust was saved
  });

  it('a blocking send stands while its trust does: it returns the worker’s answer', async () => {
    const token = issuer.token({});
    const sent = await startBlocking(t, worker, () =>
      t
        .http()
        .post(`/a2a/${worker.handle}`)
        .set('Authorization', `Bearer ${token}`)
        .send({ jsonrpc: '2.0', id: 2, method: 'message/send', params: { message: v03Message('wait for me') } })
        .then((res) => res),
    );
    await reply(t, sent.taskId, worker.key, { state: 'completed' }).expect(200);
    const res = await sent.response;
    expect(res.status).toBe(200);
    expect(res.body.result.status.state).toBe('completed');
  });

  it('refuses each bad token with a typed 401', async () => {
    const now = Math.floor(Date.now() / 1000);
    const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const claims = { iss: issuer.url, aud: AUDIENCE, sub: SUBJECT, exp: now + 300 };
    const hmacInput = `${b64({ alg: 'HS256', kid: 'k1' })}.${b64(claims)}`;
    const cases: Array<[string, string]> = [
      [issuer.token({ aud: 'https://elsewhere.test' }), 'wrong_issuer'], // no trust for that audience
      [issuer.token({ iss: 'https://unknown-issuer.test' }), 'wrong_issuer'],
      [issuer.token({ exp: now - 120 }), 'expired'],
      [issuer.token({ nbf: now + 600 }), 'not_yet_valid'],
      [issuer.token({ sub: 'system:serviceaccount:prod:intruder' }), 'unmapped_subject'],
      [`${b64({ alg: 'none' })}.${b64(claims)}.AA`, 'alg_not_allowed'],
      [`${hmacInput}.${createHmac('sha256', 'secret').update(hmacInput).digest('base64url')}`, 'alg_not_allowed'],
      // An RS256 header on the P-256 key k1: the algorithm does not fit the issuer's key.
      [`${b64({ alg: 'RS256', kid: 'k1' })}.${b64(claims)}.AAAA`, 'alg_not_allowed'],
      ['x.y.z', 'malformed'],
    ];
    for (const [token, reason] of cases) {
      expect({ reason, got: await refusal(token) }).toEqual({
        reason,
        got: { status: 401, code: 'invalid_token', reason },
      });
    }
  });

  const EXCHANGE = {
    grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
    subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
  };
  const exchange = (subjectToken: string, extra: Record<string, string> = {}) =>
    t
      .http()
      .post('/oauth/token')
      .type('form')
      .send(new URLSearchParams({ ...EXCHANGE, subject_token: subjectToken, ...extra }).toString());
  const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());

  it('exchanges a trusted issuer’s JWT (RFC 8693) for a service token that acts as its identity', async () => {
    const subjectToken = issuer.token({});
    const res = await exchange(subjectToken, {
      requested_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      audience: t.config.publicBaseUrl,
      resource: `${t.config.publicBaseUrl}/a2a/${worker.handle}`,
    }).expect(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toEqual({
      access_token: expect.any(String),
      issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      token_type: 'Bearer',
      expires_in: expect.any(Number),
      scope: 'agent',
    });
    const token: string = res.body.access_token;
    expect(claimsOf(token)).toMatchObject({
      iss: t.config.publicBaseUrl,
      aud: t.config.publicBaseUrl,
      sub: requester.id,
      scope: 'agent',
    });

    // A protocol route and a REST route, as the mapped identity; its agent scope only.
    const sent = await send(token).expect(200);
    const [row] = await t.db.query(`SELECT requester_identity_id FROM tasks WHERE id = $1`, [sent.body.result.id]);
    expect(row.requester_identity_id).toBe(requester.id);
    const task = await t
      .http()
      .get(`/api/v1/tasks/${sent.body.result.id}`)
      .set('Authorization', `Bearer ${token}`)
      .expect(200);
    expect(task.body.requester).toMatchObject({ id: requester.id, agent_handle: requester.handle });
    await t.http().get('/api/v1/api-keys').set('Authorization', `Bearer ${token}`).expect(403);

    // No audience or resource but the service's own.
    const targets: Array<Record<string, string>> = [
      { audience: 'https://elsewhere.test' },
      { resource: 'https://elsewhere.test/a2a' },
    ];
    for (const extra of targets) {
      expect((await exchange(subjectToken, extra).expect(400)).body).toMatchObject({ error: 'invalid_target' });
    }
    expect((await exchange(subjectToken, { scope: 'admin' }).expect(400)).body.error).toBe('invalid_scope');
    const logged = JSON.stringify(logs);
    for (const secret of [subjectToken, token]) {
      expect(logged).not.toContain(secret.split('.')[2]);
    }
  });

  it('issues a token that lives no longer than its subject token, nor OAUTH_TOKEN_TTL_SECONDS', async () => {
    const now = Math.floor(Date.now() / 1000);
    const short = await exchange(issuer.token({ exp: now + 90 })).expect(200);
    expect(short.body.expires_in).toBeGreaterThan(80);
    expect(short.body.expires_in).toBeLessThanOrEqual(90);
    expect(claimsOf(short.body.access_token).exp).toBe(now + 90);
    const long = await exchange(issuer.token({ exp: now + 3600 })).expect(200);
    expect(long.body.expires_in).toBe(t.config.oauthTokenTtlSeconds);
  });

  it('refuses a subject token as its bearer use would be refused, with invalid_grant', async () => {
    const now = Math.floor(Date.now() / 1000);
    issuer.add('rogue', 'ES256', false); // never published: its signature under k1's id is a bad one
    const keyId = (await t.http().get('/api-keys/self').set(apiKey(requester.key)).expect(200)).body.id;
    const ownToken = await t
      .http()
      .post('/oauth/token')
      .type('form')
      .send({ grant_type: 'client_credentials', client_id: keyId, client_secret: requester.key })
      .expect(200);
    const cases: Array<[string, string]> = [
      [issuer.token({ aud: 'https://elsewhere.test' }), 'wrong_issuer'], // no trust for that audience
      [issuer.token({ iss: 'https://unknown-issuer.test' }), 'wrong_issuer'],
      [issuer.token({ exp: now - 120 }), 'expired'],
      [issuer.token({}, 'rogue', { kid: 'k1' }), 'bad_signature'],
      [issuer.token({ sub: 'system:serviceaccount:prod:intruder' }), 'unmapped_subject'],
      ['x.y.z', 'malformed'],
    ];
    for (const [token, reason] of cases) {
      // The same refusal as the token's own use as a bearer token.
      expect(await refusal(token)).toMatchObject({ status: 401, reason });
      const res = await exchange(token);
      expect({ reason, status: res.status, error: res.body.error, description: res.body.error_description }).toEqual({
        reason,
        status: 400,
        error: 'invalid_grant',
        description: expect.stringContaining(`${reason}:`),
      });
    }
    // The service's own token is no subject token (though it is a good bearer token).
    const own = await exchange(ownToken.body.access_token).expect(400);
    expect(own.body).toMatchObject({
      error: 'invalid_grant',
      error_description: expect.stringContaining('wrong_issuer:'),
    });
    expect((await exchange('').expect(400)).body.error).toBe('invalid_request');
    // A subject token over the length a bearer token may have: refused unread.
    const oversized = issuer.token({ pad: 'x'.repeat(8 * 1024) });
    expect((await exchange(oversized).expect(400)).body).toMatchObject({
      error: 'invalid_request',
      error_description: expect.stringContaining('longer than 8192'),
    });
    expect(await refusal(oversized)).toMatchObject({ status: 401, reason: 'malformed' });
    expect((await exchange(issuer.token({}), { subject_token_type: 'urn:x' }).expect(400)).body.error).toBe(
      'invalid_request',
    );
  });

  it('ends an exchanged token on the next request once its trust changes, as its subject token ends', async () => {
    const path = (id: string) => `/api/v1/trusted-issuers/${id}`;
    const created = await t
      .http()
      .post('/api/v1/trusted-issuers')
      .set(bearer(acme))
      .send({
        issuer: issuer.url,
        jwks_uri: `${issuer.url}/jwks.json`,
        audience: 'exchanged',
        subjects: { [SUBJECT]: requester.handle },
      })
      .expect(201);
    const id: string = created.body.id;
    const exchanged = async () =>
      (await exchange(issuer.token({ aud: 'exchanged' })).expect(200)).body.access_token as string;

    // The subject removed (and the subject token with it): refused at once.
    let token = await exchanged();
    await t.http().get('/api/v1/tasks').set('Authorization', `Bearer ${token}`).expect(200);
    await t
      .http()
      .patch(path(id))
      .set(bearer(acme))
      .send({ subjects: { 'ci:deploy': requester.handle } })
      .expect(200);
    expect(await refusal(token)).toMatchObject({ status: 401, code: 'invalid_token', reason: 'unmapped_subject' });
    expect(await refusal(issuer.token({ aud: 'exchanged' }))).toMatchObject({
      status: 401,
      reason: 'unmapped_subject',
    });
    await send(token).expect(401);

    // The subject remapped to another identity: the token does not follow it.
    await t
      .http()
      .patch(path(id))
      .set(bearer(acme))
      .send({ subjects: { [SUBJECT]: requester.handle } })
      .expect(200);
    token = await exchanged();
    await t.http().get('/api/v1/tasks').set('Authorization', `Bearer ${token}`).expect(200);
    await t
      .http()
      .patch(path(id))
      .set(bearer(acme))
      .send({ subjects: { [SUBJECT]: worker.handle } })
      .expect(200);
    expect(await refusal(token)).toMatchObject({ status: 401, reason: 'unmapped_subject' });

    // Its identity disabled (the protocol refuses the caller at once), then deleted (the token is refused).
    const spare = await enabledAgent(t, acme);
    await t
      .http()
      .patch(path(id))
      .set(bearer(acme))
      .send({ subjects: { [SUBJECT]: spare.handle } })
      .expect(200);
    token = await exchanged();
    await send(token).expect(200);
    const settings = `/api/v1/identities/${spare.handle}/settings`;
    await t.http().patch(settings).set(bearer(acme)).send({ enabled: false }).expect(200);
    const disabled = await send(token).expect(403);
    expect(disabled.body.error.data.reason).toBe('requester_disabled');
    await t.http().delete(`/api/v1/identities/${spare.handle}`).set(bearer(acme)).expect(204);
    expect(await refusal(token)).toMatchObject({ status: 401, reason: 'unmapped_subject' });
    await t
      .http()
      .patch(path(id))
      .set(bearer(acme))
      .send({ subjects: { [SUBJECT]: requester.handle } })
      .expect(200);

    // The subject token's key dropped from the trust's keys: refused as that JWT is, until it is back.
    token = await exchanged();
    issuer.add('replacement', 'EdDSA', false);
    const replacement = { ...issuer.keys.get('replacement')!.publicKey.export({ format: 'jwk' }), kid: 'replacement' };
    await t
      .http()
      .patch(path(id))
      .set(bearer(acme))
      .send({ jwks: { keys: [replacement] } })
      .expect(200);
    expect(await refusal(token)).toMatchObject({ status: 401, code: 'invalid_token', reason: 'unknown_kid' });
    expect(await refusal(issuer.token({ aud: 'exchanged' }))).toMatchObject({ status: 401, reason: 'unknown_kid' });
    const underReplacement = (await exchange(issuer.token({ aud: 'exchanged' }, 'replacement')).expect(200)).body
      .access_token as string;
    await t.http().get('/api/v1/tasks').set('Authorization', `Bearer ${underReplacement}`).expect(200);
    await t
      .http()
      .patch(path(id))
      .set(bearer(acme))
      .send({ jwks_uri: `${issuer.url}/jwks.json` })
      .expect(200);
    await t.http().get('/api/v1/tasks').set('Authorization', `Bearer ${token}`).expect(200);
    expect(await refusal(underReplacement)).toMatchObject({ status: 401, reason: 'unknown_kid' });

    // A new audience, then the trust removed.
    token = await exchanged();
    await t.http().patch(path(id)).set(bearer(acme)).send({ audience: 'exchanged-2' }).expect(200);
    expect(await refusal(token)).toMatchObject({ status: 401, reason: 'untrusted_issuer' });
    await t.http().patch(path(id)).set(bearer(acme)).send({ audience: 'exchanged' }).expect(200);
    token = await exchanged();
    await t.http().get('/api/v1/tasks').set('Authorization', `Bearer ${token}`).expect(200);
    await t.http().delete(path(id)).set(bearer(acme)).expect(204);
    expect(await refusal(token)).toMatchObject({ status: 401, reason: 'untrusted_issuer' });
  });

  it('an unknown kid fetches the keys again, at most once every 30 s; until then it is refused', async () => {
    issuer.add('k2', 'EdDSA');
    const fetches = issuer.fetches;
    // Saved just now: the keys were fetched less than 30 s ago, so k2 is not looked for yet.
    expect(await refusal(issuer.token({}, 'k2'))).toMatchObject({ status: 401, reason: 'unknown_kid' });
    expect(issuer.fetches).toBe(fetches);
    const realNow = Date.now.bind(Date);
    const spy = jest.spyOn(Date, 'now').mockImplementation(() => realNow() + 31_000);
    try {
      await t
        .http()
        .get('/api/v1/tasks')
        .set('Authorization', `Bearer ${issuer.token({}, 'k2')}`)
        .expect(200);
      expect(issuer.fetches).toBe(fetches + 1);
      issuer.add('k3', 'ES256', false); // never published
      expect(await refusal(issuer.token({}, 'k3'))).toMatchObject({ status: 401, reason: 'unknown_kid' });
      expect(await refusal(issuer.token({}, 'k3'))).toMatchObject({ status: 401, reason: 'unknown_kid' });
      expect(issuer.fetches).toBe(fetches + 1); // the refetch on k2 was within 30 s
    } finally {
      spy.mockRestore();
    }
  });

  it('fails closed when the issuer’s JWKS is unreachable and no key is known', async () => {
    const account = await signup(t);
    const [identity] = (await t.db.query(
      `INSERT INTO identities (agent_handle, organization_id, claimed_at, enabled) VALUES ('fed-closed', $1, now(), true) RETURNING id`,
      [account.organizationId],
    )) as Array<{ id: string }>;
    expect(identity.id).toEqual(expect.any(String));
    await t
      .http()
      .post('/api/v1/trusted-issuers')
      .set(bearer(account))
      .send({
        issuer: issuer.url,
        jwks_uri: 'http://127.0.0.1:9/jwks.json',
        audience: 'closed',
        subjects: { [SUBJECT]: 'fed-closed' },
      })
      .expect(201);
    expect(await refusal(issuer.token({ aud: 'closed' }))).toMatchObject({ status: 401, reason: 'jwks_unavailable' });
  });

  it('is changed by PATCH: the very next request reads the new mapping, audience and keys', async () => {
    const path = (id: string) => `/api/v1/trusted-issuers/${id}`;
    const created = await t
      .http()
      .post('/api/v1/trusted-issuers')
      .set(bearer(acme))
      .send({
        issuer: issuer.url,
        jwks_uri: `${issuer.url}/jwks.json`,
        audience: 'patched',
        subjects: { [SUBJECT]: requester.handle },
      })
      .expect(201);
    const id: string = created.body.id;
    const token = issuer.token({ aud: 'patched' });
    await t.http().get('/api/v1/tasks').set('Authorization', `Bearer ${token}`).expect(200);

    // Subjects replaced: the removed subject's token — the very token just accepted — is refused at once.
    const remapped = await t
      .http()
      .patch(path(id))
      .set(bearer(acme))
      .send({ subjects: { 'ci:deploy': requester.handle } })
      .expect(200);
    expect(remapped.body).toMatchObject({ id, audience: 'patched', subjects: { 'ci:deploy': requester.handle } });
    expect(await refusal(token)).toMatchObject({ status: 401, reason: 'unmapped_subject' });
    await t
      .http()
      .get('/api/v1/tasks')
      .set('Authorization', `Bearer ${issuer.token({ aud: 'patched', sub: 'ci:deploy' })}`)
      .expect(200);

    // A new audience: tokens for the old one fall under no trust.
    await t.http().patch(path(id)).set(bearer(acme)).send({ audience: 'patched-2' }).expect(200);
    expect(await refusal(issuer.token({ aud: 'patched', sub: 'ci:deploy' }))).toMatchObject({
      status: 401,
      reason: 'wrong_issuer',
    });
    const deploy = issuer.token({ aud: 'patched-2', sub: 'ci:deploy' });
    await t.http().get('/api/v1/tasks').set('Authorization', `Bearer ${deploy}`).expect(200);

    // Keys given inline replace the JWKS address: k1 is no longer the trust's, the inline key is, with no fetch.
    issuer.add('inline', 'EdDSA', false);
    const inlineKey = { ...issuer.keys.get('inline')!.publicKey.export({ format: 'jwk' }), kid: 'inline' };
    const fetches = issuer.fetches;
    const inline = await t
      .http()
      .patch(path(id))
      .set(bearer(acme))
      .send({ jwks: { keys: [{ ...inlineKey, x5c: ['MIIB'], note: 'not kept' }] } })
      .expect(200);
    // Only a public key's own members are kept.
    expect(inline.body).toMatchObject({ jwks_uri: null });
    expect(inline.body.jwks).toEqual({ keys: [inlineKey] });
    expect(await refusal(deploy)).toMatchObject({ status: 401, reason: 'unknown_kid' });
    await t
      .http()
      .get('/api/v1/tasks')
      .set('Authorization', `Bearer ${issuer.token({ aud: 'patched-2', sub: 'ci:deploy' }, 'inline')}`)
      .expect(200);
    expect(issuer.fetches).toBe(fetches);
    // And back: a JWKS address clears the inline keys.
    const back = await t
      .http()
      .patch(path(id))
      .set(bearer(acme))
      .send({ jwks_uri: `${issuer.url}/jwks.json` })
      .expect(200);
    expect(back.body).toMatchObject({ jwks_uri: `${issuer.url}/jwks.json`, jwks: null });
    await t.http().get('/api/v1/tasks').set('Authorization', `Bearer ${deploy}`).expect(200);

    // Checked as a new trust is; a refused change changes nothing.
    const refused = async (body: object, status: number) =>
      (await t.http().patch(path(id)).set(bearer(acme)).send(body).expect(status)).body;
    expect(await refused({ subjects: { s: 'no-such-agent' } }, 400)).toMatchObject({
      code: 'validation_failed',
      errors: [{ field: 'subjects' }],
    });
    expect(await refused({ audience: AUDIENCE }, 409)).toMatchObject({ code: 'trusted_issuer_taken' });
    expect(await refused({ jwks_uri: 'ftp://issuer.test/jwks.json' }, 400)).toMatchObject({
      code: 'invalid_issuer_url',
      errors: [{ field: 'jwks_uri' }],
    });
    expect(await refused({ issuer: 'not a url' }, 400)).toMatchObject({
      code: 'invalid_issuer_url',
      errors: [{ field: 'issuer' }],
    });
    expect(await refused({ issuer: null }, 400)).toMatchObject({ code: 'validation_failed' });
    expect(await refused({ jwks: { keys: [{ ...inlineKey, kid: undefined }] } }, 400)).toMatchObject({
      errors: [{ field: 'jwks' }],
    });
    expect(await refused({ jwks: { keys: [{ ...inlineKey, x5c: ['A'.repeat(64 * 1024)] }] } }, 400)).toMatchObject({
      code: 'validation_failed',
      errors: [{ field: 'jwks', message: expect.stringContaining('64 KiB') }],
    });
    const privateKey = { ...issuer.keys.get('inline')!.privateKey.export({ format: 'jwk' }), kid: 'inline' };
    expect(await refused({ jwks: { keys: [privateKey] } }, 400)).toMatchObject({ errors: [{ field: 'jwks' }] });
    expect(await refused({ jwks: { keys: [inlineKey] }, jwks_uri: `${issuer.url}/jwks.json` }, 400)).toMatchObject({
      errors: [{ field: 'jwks' }],
    });
    expect((await t.http().get(path(id)).set(bearer(acme)).expect(200)).body).toEqual(back.body);
    await t
      .http()
      .patch(path(id))
      .set(bearer(await signup(t)))
      .send({ audience: 'x' })
      .expect(404);
    await t.http().patch(path(id)).set(apiKey(requester.key)).send({ audience: 'x' }).expect(403);

    // Each change is audited with what it changed.
    const audit = await t
      .http()
      .get(`/api/v1/audit-events?action=trusted_issuer.updated&target=${id}`)
      .set(bearer(acme))
      .expect(200);
    expect(audit.body.audit_events.map((e: { changes: object }) => Object.keys(e.changes).sort())).toEqual([
      ['jwks', 'jwks_uri'],
      ['jwks', 'jwks_uri'],
      ['audience'],
      ['subjects'],
    ]);
    await t.http().delete(path(id)).set(bearer(acme)).expect(204);
  });

  it('fetches the issuer’s keys afresh when a trust goes from fetched keys to inline ones and back', async () => {
    const created = await t
      .http()
      .post('/api/v1/trusted-issuers')
      .set(bearer(acme))
      .send({ issuer: issuer.url, audience: 'switched', subjects: { [SUBJECT]: requester.handle } }) // discovery
      .expect(201);
    const path = `/api/v1/trusted-issuers/${created.body.id}`;
    await t
      .http()
      .get('/api/v1/tasks')
      .set('Authorization', `Bearer ${issuer.token({ aud: 'switched' })}`)
      .expect(200);
    // A key published after the keys were fetched, then the trust switched inline and back.
    issuer.add('published-later', 'ES256');
    issuer.add('switched-inline', 'EdDSA', false);
    const jwk = { ...issuer.keys.get('switched-inline')!.publicKey.export({ format: 'jwk' }), kid: 'switched-inline' };
    await t
      .http()
      .patch(path)
      .set(bearer(acme))
      .send({ jwks: { keys: [jwk] } })
      .expect(200);
    const back = await t.http().patch(path).set(bearer(acme)).send({ jwks: null }).expect(200);
    expect(back.body).toMatchObject({ jwks_uri: null, jwks: null });
    // Not the keys held from before the switch (fetched less than 30 s ago, they would not know it).
    await t
      .http()
      .get('/api/v1/tasks')
      .set('Authorization', `Bearer ${issuer.token({ aud: 'switched' }, 'published-later')}`)
      .expect(200);
    await t.http().delete(path).set(bearer(acme)).expect(204);
  });

  it('takes an issuer’s keys inline (an issuer with static keys): its tokens are verified with no fetch', async () => {
    issuer.add('static', 'ES256', false);
    const jwk = { ...issuer.keys.get('static')!.publicKey.export({ format: 'jwk' }), kid: 'static', use: 'sig' };
    const fetches = issuer.fetches;
    const res = await t
      .http()
      .post('/api/v1/trusted-issuers')
      .set(bearer(acme))
      .send({
        issuer: 'https://ci.example.test',
        jwks: { keys: [jwk] },
        audience: 'static',
        subjects: { job: requester.handle },
      })
      .expect(201);
    expect(res.body).toMatchObject({ jwks_uri: null, jwks: { keys: [jwk] } });
    const token = issuer.token({ iss: 'https://ci.example.test', aud: 'static', sub: 'job' }, 'static');
    await t.http().get('/api/v1/tasks').set('Authorization', `Bearer ${token}`).expect(200);
    await t.http().get('/api/v1/tasks').set('Authorization', `Bearer ${token}`).expect(200);
    expect(await refusal(issuer.token({ iss: 'https://ci.example.test', aud: 'static', sub: 'job' }))).toMatchObject({
      status: 401,
      reason: 'unknown_kid',
    });
    expect(issuer.fetches).toBe(fetches);
    const both = { issuer: 'https://ci.example.test', jwks_uri: 'https://ci.example.test/jwks', jwks: { keys: [jwk] } };
    expect(
      (
        await t
          .http()
          .post('/api/v1/trusted-issuers')
          .set(bearer(acme))
          .send({ ...both, audience: 'both', subjects: { job: requester.handle } })
          .expect(400)
      ).body,
    ).toMatchObject({ code: 'validation_failed', errors: [{ field: 'jwks' }] });
    await t.http().delete(`/api/v1/trusted-issuers/${res.body.id}`).set(bearer(acme)).expect(204);
  });

  it('is managed by an admin key or the Console of the organization, and ends its tokens when removed', async () => {
    const other = await signup(t);
    await t.http().get('/api/v1/trusted-issuers').set(apiKey(requester.key)).expect(403);
    await t.http().get(`/api/v1/trusted-issuers/${trustId}`).set(bearer(other)).expect(404);
    const listed = await t.http().get('/api/v1/trusted-issuers').set(bearer(acme)).expect(200);
    expect(listed.body.items.map((i: { id: string }) => i.id)).toContain(trustId);
    const base = { issuer: issuer.url, audience: AUDIENCE, subjects: { [SUBJECT]: requester.handle } };
    expect((await t.http().post('/api/v1/trusted-issuers').set(bearer(acme)).send(base).expect(409)).body.code).toBe(
      'trusted_issuer_taken',
    );
    const unknown = { ...base, audience: 'other', subjects: { s: 'no-such-agent' } };
    expect((await t.http().post('/api/v1/trusted-issuers').set(bearer(acme)).send(unknown).expect(400)).body.code).toBe(
      'validation_failed',
    );
    const ftp = { ...base, audience: 'ftp', issuer: 'ftp://issuer.test' };
    expect((await t.http().post('/api/v1/trusted-issuers').set(bearer(acme)).send(ftp).expect(400)).body.code).toBe(
      'invalid_issuer_url',
    );

    const token = issuer.token({});
    await t.http().get('/api/v1/tasks').set('Authorization', `Bearer ${token}`).expect(200);
    await t.http().delete(`/api/v1/trusted-issuers/${trustId}`).set(bearer(acme)).expect(204);
    const audit = await t
      .http()
      .get(`/api/v1/audit-events?action=trusted_issuer.*&target=${trustId}`)
      .set(bearer(acme))
      .expect(200);
    expect(
      audit.body.audit_events.map((e: { action: string; target: { id: string } }) => [e.action, e.target.id]),
    ).toEqual([
      ['trusted_issuer.deleted', trustId],
      ['trusted_issuer.created', trustId],
    ]);
    expect(await refusal(token)).toMatchObject({ status: 401, reason: 'wrong_issuer' });
  });
});
