import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { calculateJwkThumbprint, exportJWK, FlattenedSign, generateKeyPair, type JWK } from 'jose';

type KeyLike = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
import { enabledAgent, submitTask, type Agent } from '../support/a2a';
import { startApp, type TestApp } from '../support/app';
import { canonicalForm } from '../support/agent-cards';
import { eventually } from '../support/eventually';
import { apiKey, bearer, signup, type ConsoleAccount } from '../support/fixtures';

/**
 * Verified upstream cards (docs/api.md §14): an upstream's card is verified against the
 * keys pinned for it, never a `jku` the card names. Keys are generated here; the upstream
 * is a plain HTTP server serving whatever card (and key sets) the test puts there.
 */
describe('verified upstream cards', () => {
  let t: TestApp;
  let acme: ConsoleAccount;
  let server: Server;
  let base: string;
  let card: object = {};
  const served: Record<string, object> = {};
  const hits: string[] = [];
  let pinned: { privateKey: KeyLike; jwk: JWK };
  let other: { privateKey: KeyLike; jwk: JWK };

  async function keyPair(kid: string) {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    return { privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256' } };
  }

  beforeAll(async () => {
    t = await startApp({ WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true', EVENTS_POLL_INTERVAL_MS: '50' });
    acme = await signup(t, 'Pinning Org');
    pinned = await keyPair('upstream-2026');
    other = await keyPair('upstream-2026'); // the same kid, another key
    server = createServer((req, res) => {
      hits.push(req.url ?? '');
      const body = req.url === '/card' ? card : served[req.url ?? ''];
      res.writeHead(body ? 200 : 404, { 'content-type': 'application/json' }).end(JSON.stringify(body ?? {}));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    served['/jwks'] = { keys: [pinned.jwk] };
  });
  afterAll(async () => {
    await t.close();
    await new Promise((resolve) => server.close(resolve));
  });

  /** A v1.0 card for the upstream, unsigned. */
  const unsigned = (description = 'Bridged agent.') => ({
    name: 'Upstream',
    description,
    version: '1',
    supportedInterfaces: [{ url: `${base}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    capabilities: {},
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'echo', name: 'Echo', description: 'Echoes.', tags: ['test'] }],
  });

  async function signed(body: Record<string, unknown>, key: KeyLike, header: Record<string, unknown>) {
    const jws = await new FlattenedSign(Buffer.from(canonicalForm(body)))
      .setProtectedHeader({ alg: 'ES256', typ: 'JOSE', ...header })
      .sign(key);
    return { ...body, signatures: [{ protected: jws.protected, signature: jws.signature }] };
  }

  function bridge(agent: Agent, trust: Record<string, unknown>) {
    return t
      .http()
      .put(`/api/v1/identities/${agent.handle}/upstream`)
      .set(bearer(acme))
      .send({ url: `${base}/a2a`, card_url: `${base}/card`, ...trust });
  }

  it('records verified by the pinned key, and failed for a tampered card, another key, or a jku pointing elsewhere', async () => {
    const agent = await enabledAgent(t, acme);
    const trust = { trusted_keys: { keys: [pinned.jwk] } };

    card = await signed(unsigned(), pinned.privateKey, { kid: 'upstream-2026' });
    const ok = await bridge(agent, trust).expect(200);
    expect(ok.body.trusted_keys).toEqual({ keys: [pinned.jwk] });
    expect(ok.body.card_verification).toEqual({
      status: 'verified',
      kid: 'upstream-2026',
      error: null,
      checked_at: expect.any(String),
    });
    // The own key reads it too.
    const own = await t.http().get(`/api/v1/identities/${agent.handle}/upstream`).set(apiKey(agent.key)).expect(200);
    expect(own.body.card_verification.status).toBe('verified');

    card = { ...(card as Record<string, unknown>), description: 'Tampered after signing.' };
    expect((await bridge(agent, trust).expect(200)).body.card_verification).toMatchObject({
      status: 'failed',
      kid: null,
      error: 'no signature verifies with a pinned key',
    });

    card = await signed(unsigned(), other.privateKey, { kid: 'upstream-2026' });
    expect((await bridge(agent, trust).expect(200)).body.card_verification.status).toBe('failed');

    served['/elsewhere'] = { keys: [{ ...other.jwk, kid: 'attacker' }] };
    card = await signed(unsigned(), other.privateKey, { kid: 'attacker', jku: `${base}/elsewhere` });
    hits.length = 0;
    expect((await bridge(agent, trust).expect(200)).body.card_verification.status).toBe('failed');
    expect(hits).not.toContain('/elsewhere');
  });

  it('records unsigned; reads pinned keys from trusted_jwks_uri; import-card verifies again', async () => {
    const agent = await enabledAgent(t, acme);
    card = unsigned();
    const set = await bridge(agent, { trusted_jwks_uri: `${base}/jwks` }).expect(200);
    expect(set.body).toMatchObject({
      trusted_keys: null,
      trusted_jwks_uri: `${base}/jwks`,
      card_verification: { status: 'unsigned', kid: null, error: null },
    });

    card = await signed(unsigned('Now signed.'), pinned.privateKey, { kid: 'upstream-2026' });
    await t.http().post(`/api/v1/identities/${agent.handle}/upstream/import-card`).set(bearer(acme)).expect(200);
    const read = await t.http().get(`/api/v1/identities/${agent.handle}/upstream`).set(bearer(acme)).expect(200);
    expect(read.body.card_verification).toMatchObject({ status: 'verified', kid: 'upstream-2026' });

    // A signed card with no keys pinned cannot be verified.
    const unpinned = await enabledAgent(t, acme);
    expect((await bridge(unpinned, {}).expect(200)).body.card_verification).toMatchObject({
      status: 'failed',
      error: 'the card is signed, but no keys are pinned for this upstream',
    });
  });

  it('knows a key without kid by its thumbprint, tries each pinned key for a signature without one, and fails when the set cannot be read', async () => {
    const agent = await enabledAgent(t, acme);
    const { kid: _kid, ...anonymous } = pinned.jwk;
    card = await signed(unsigned(), pinned.privateKey, {});
    const res = await bridge(agent, { trusted_keys: { keys: [other.jwk, anonymous] } }).expect(200);
    expect(res.body.card_verification).toMatchObject({
      status: 'verified',
      kid: await calculateJwkThumbprint(anonymous, 'sha256'),
    });

    const unreadable = await bridge(agent, { trusted_jwks_uri: `${base}/no-such-jwks` }).expect(200);
    expect(unreadable.body.card_verification).toMatchObject({
      status: 'failed',
      kid: null,
      error: expect.stringMatching(/^the pinned key set could not be read/),
    });
  });

  it('keeps the set at trusted_jwks_uri in memory, and fetches it again for a kid it does not hold, at most once every 30 s', async () => {
    const agent = await enabledAgent(t, acme);
    const rotated = await keyPair('upstream-2027');
    served['/rotating-jwks'] = { keys: [pinned.jwk] };
    hits.length = 0;
    const fetches = () => hits.filter((hit) => hit === '/rotating-jwks').length;
    const importCard = async () => {
      await t.http().post(`/api/v1/identities/${agent.handle}/upstream/import-card`).set(bearer(acme)).expect(200);
      return (await t.http().get(`/api/v1/identities/${agent.handle}/upstream`).set(bearer(acme)).expect(200)).body
        .card_verification;
    };

    card = await signed(unsigned(), pinned.privateKey, { kid: 'upstream-2026' });
    const set = await bridge(agent, { trusted_jwks_uri: `${base}/rotating-jwks` }).expect(200);
    expect(set.body.card_verification).toMatchObject({ status: 'verified', kid: 'upstream-2026' });
    expect(await importCard()).toMatchObject({ status: 'verified', kid: 'upstream-2026' });
    expect(fetches()).toBe(1);

    // The upstream rotates its key: the card names a kid the set held does not have.
    served['/rotating-jwks'] = { keys: [rotated.jwk] };
    card = await signed(unsigned(), rotated.privateKey, { kid: 'upstream-2027' });
    expect(await importCard()).toMatchObject({ status: 'failed', error: 'no signature verifies with a pinned key' });
    expect(fetches()).toBe(1); // fetched less than 30 s ago
    const realNow = Date.now.bind(Date);
    const spy = jest.spyOn(Date, 'now').mockImplementation(() => realNow() + 31_000);
    try {
      expect(await importCard()).toMatchObject({ status: 'verified', kid: 'upstream-2027' });
      expect(fetches()).toBe(2);
      expect(await importCard()).toMatchObject({ status: 'verified', kid: 'upstream-2027' });
      expect(fetches()).toBe(2);
    } finally {
      spy.mockRestore();
    }
  });

  it('a test verifies the card against the keys its body pins, or the saved ones, and records nothing', async () => {
    const agent = await enabledAgent(t, acme);
    const test = (body?: object) => {
      const req = t.http().post(`/api/v1/identities/${agent.handle}/upstream/test`).set(bearer(acme));
      return body === undefined ? req : req.send(body);
    };
    const target = { url: `${base}/a2a`, card_url: `${base}/card` };
    card = await signed(unsigned(), pinned.privateKey, { kid: 'upstream-2026' });
    const verified = await test({ ...target, trusted_keys: { keys: [pinned.jwk] } }).expect(200);
    expect(verified.body).toMatchObject({
      tested: 'request',
      card_url: `${base}/card`,
      card: { name: 'Upstream', skills: 1 },
      card_verification: { status: 'verified', kid: 'upstream-2026', error: null },
      problem: null,
    });
    expect(
      (await test({ ...target, trusted_keys: { keys: [other.jwk] } }).expect(200)).body.card_verification,
    ).toMatchObject({ status: 'failed', kid: null, error: 'no signature verifies with a pinned key' });
    expect((await test(target).expect(200)).body.card_verification).toMatchObject({
      status: 'failed',
      error: 'the card is signed, but no keys are pinned for this upstream',
    });
    // Keys that are not a public key set are refused as the PUT refuses them.
    expect((await test({ ...target, trusted_keys: { keys: [] } }).expect(400)).body.code).toBe('invalid_trusted_keys');

    // Saved with the pinned key while the card was unsigned; a test of the saved upstream sees the signed card now,
    // and the saved verification stays as the PUT recorded it.
    card = unsigned();
    await bridge(agent, { trusted_jwks_uri: `${base}/jwks` }).expect(200);
    card = await signed(unsigned(), pinned.privateKey, { kid: 'upstream-2026' });
    const saved = await test().expect(200);
    expect(saved.body).toMatchObject({
      tested: 'saved',
      card_verification: { status: 'verified', kid: 'upstream-2026' },
    });
    const read = await t.http().get(`/api/v1/identities/${agent.handle}/upstream`).set(bearer(acme)).expect(200);
    expect(read.body.card_verification).toMatchObject({ status: 'unsigned' });

    // A key set served wrong (another key under the card's kid), then fixed: a test reads it again (past the 30 s
    // between fetches), where a forward would keep the set held for up to an hour.
    served['/fixed-jwks'] = { keys: [other.jwk] };
    await bridge(agent, { trusted_jwks_uri: `${base}/fixed-jwks` }).expect(200);
    expect((await test().expect(200)).body.card_verification).toMatchObject({ status: 'failed' });
    served['/fixed-jwks'] = { keys: [pinned.jwk] };
    const realNow = Date.now.bind(Date);
    const spy = jest.spyOn(Date, 'now').mockImplementation(() => realNow() + 31_000);
    try {
      expect((await test().expect(200)).body.card_verification).toMatchObject({
        status: 'verified',
        kid: 'upstream-2026',
      });
    } finally {
      spy.mockRestore();
    }
  });

  it('refuses a private key, a key set that is not one, or both ways of pinning', async () => {
    const agent = await enabledAgent(t, acme);
    card = unsigned();
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    for (const trust of [
      { trusted_keys: { keys: [await exportJWK(privateKey)] } },
      { trusted_keys: { keys: [] } },
      { trusted_keys: { keys: [{ kty: 'oct', k: 'c2VjcmV0' }] } },
      { trusted_keys: [pinned.jwk] },
      { trusted_keys: { keys: [pinned.jwk] }, trusted_jwks_uri: `${base}/jwks` },
    ]) {
      const res = await bridge(agent, trust);
      expect([res.status, res.body.code]).toEqual([
        400,
        expect.stringMatching(/^(invalid_trusted_keys|validation_failed)$/),
      ]);
      expect(JSON.stringify(res.body)).not.toContain('"d"');
    }
  });

  it('an organization requiring verified cards never forwards to an upstream whose card is not verified', async () => {
    const settings = await t
      .http()
      .patch('/api/v1/organization/settings')
      .set(bearer(acme))
      .send({ require_verified_upstream_cards: true })
      .expect(200);
    expect(settings.body).toMatchObject({ require_verified_upstream_cards: true });
    const requester = await enabledAgent(t, acme);
    const bridged = await enabledAgent(t, acme);
    card = unsigned();
    await bridge(bridged, { trusted_keys: { keys: [pinned.jwk] } }).expect(200);
    hits.length = 0;
    const task = await submitTask(t, requester, bridged);
    const [row] = await eventually(
      async () => (await t.db.query(`SELECT state FROM tasks WHERE id = $1`, [task.id])) as Array<{ state: string }>,
      ([current]) => current?.state === 'failed',
    );
    expect(row.state).toBe('failed');
    expect(hits).not.toContain('/a2a');
    await t
      .http()
      .patch('/api/v1/organization/settings')
      .set(bearer(acme))
      .send({ require_verified_upstream_cards: false })
      .expect(200);
  });
});
