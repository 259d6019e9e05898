import { createHash } from 'node:crypto';
import { resolveWithSdk } from '../support/a2a-sdk';
import { startApp, type TestApp } from '../support/app';
import { agentSignup, apiKey, bearer, createIdentity, signup, unique, type ConsoleAccount } from '../support/fixtures';

/** Cards name this base, whatever address the test server listens on: it comes from config, never from Host. */
const PUBLIC_BASE_URL = 'https://agents.example.test';

describe('agent signup and claim', () => {
  let t: TestApp;
  let acme: ConsoleAccount;
  let other: ConsoleAccount;

  beforeAll(async () => {
    t = await startApp({ PUBLIC_BASE_URL });
    acme = await signup(t, 'Acme Robotics');
    other = await signup(t, 'Other');
  });
  afterAll(() => t.close());

  it('signup → claim → enable → card → directory, and the card is a valid A2A AgentCard for the official SDK', async () => {
    const handle = unique('quoter');
    const skills = [
      {
        id: 'quote',
        name: 'Price quotes',
        description: 'Quotes prices for parts.',
        tags: ['pricing', 'Sales'],
        examples: ['Quote 12 bolts'],
      },
    ];

    // 1. The agent signs itself up, without a credential.
    const before = Date.now();
    const res = await t
      .http()
      .post('/api/v1/agent-signup')
      .send({ agent_handle: handle, display_name: 'Quoter', description: 'Quotes prices.', skills })
      .expect(201);
    expect(res.body.identity).toMatchObject({
      agent_handle: handle,
      organization_id: null,
      claimed: false,
      claimed_at: null,
      enabled: false,
      skills,
      card_url: `${PUBLIC_BASE_URL}/a2a/${handle}/card`,
    });
    expect(res.body.api_key).toMatchObject({
      scope: 'agent',
      scoped_identity_id: res.body.identity.id,
      organization_id: null,
      created_by: { type: 'signup', id: null },
      key: expect.stringMatching(/^a2a_agt_/),
    });
    const { code, expires_at: expiresAt } = res.body.claim;
    expect(code).toMatch(/^a2a_clm_[A-Za-z0-9_-]{43}$/);
    // CLAIM_CODE_TTL_HOURS defaults to 72.
    expect(Date.parse(expiresAt) - before).toBeGreaterThan(72 * 3600_000 - 60_000);
    expect(Date.parse(expiresAt) - before).toBeLessThan(72 * 3600_000 + 60_000);
    const key = apiKey(res.body.api_key.key);

    // The code is stored only as its SHA-256.
    const [row] = await t.db.query(`SELECT claim_code_hash FROM identities WHERE id = $1`, [res.body.identity.id]);
    expect(row.claim_code_hash).toEqual(createHash('sha256').update(code).digest());
    const dump = JSON.stringify(await t.db.query(`SELECT * FROM identities`));
    expect(dump).not.toContain(code);

    // 2. Unclaimed: the key reads itself and nothing else; nothing is served.
    await t.http().get('/api-keys/self').set(key).expect(200);
    await t.http().get(`/api/v1/identities/${handle}`).set(key).expect(200);
    const refused = [
      t.http().patch(`/api/v1/identities/${handle}/settings`).set(key).send({ enabled: true }),
      t.http().patch(`/api/v1/identities/${handle}`).set(key).send({ description: 'x' }),
      t.http().get(`/api/v1/identities/${handle}/settings`).set(key),
      t.http().get('/api/v1/identities/a2a/directory').set(key),
    ];
    for (const r of await Promise.all(refused)) {
      expect({ status: r.status, code: r.body.code }).toEqual({ status: 403, code: 'identity_unclaimed' });
    }
    await t.http().get(`/a2a/${handle}/card`).expect(404);
    // No organization can see or touch it before the claim.
    await t.http().get(`/api/v1/identities/${handle}`).set(bearer(acme)).expect(404);

    // 3. A Console user claims it into their organization; the code is spent.
    const claimed = await t
      .http()
      .post('/api/v1/identities/claim')
      .set(bearer(acme))
      .send({ claim_code: code })
      .expect(200);
    expect(claimed.body).toMatchObject({
      agent_handle: handle,
      organization_id: acme.organizationId,
      claimed: true,
      claimed_at: expect.any(String),
      enabled: false,
    });
    const [afterClaim] = await t.db.query(`SELECT claim_code_hash, claim_expires_at FROM identities WHERE id = $1`, [
      res.body.identity.id,
    ]);
    expect(afterClaim).toEqual({ claim_code_hash: null, claim_expires_at: null });
    for (const account of [acme, other]) {
      const again = await t
        .http()
        .post('/api/v1/identities/claim')
        .set(bearer(account))
        .send({ claim_code: code })
        .expect(404);
      expect(again.body.code).toBe('claim_code_invalid');
    }
    // The key moved with the identity.
    expect((await t.http().get('/api-keys/self').set(key).expect(200)).body.organization_id).toBe(acme.organizationId);

    // 4. The own key enables the receiver: the card is served at once, even though
    //    the identity is not listed (docs/api.md §4).
    await t.http().patch(`/api/v1/identities/${handle}/settings`).set(key).send({ enabled: true }).expect(200);
    const card = (await t.http().get(`/a2a/${handle}/card`).expect(200)).body;
    expect(card).toMatchObject({
      name: 'Quoter',
      description: 'Quotes prices.',
      provider: { organization: 'Acme Robotics', url: PUBLIC_BASE_URL },
      skills,
    });
    expect((await t.http().get('/a2a/directory').query({ q: handle }).expect(200)).body.agents).toEqual([]);

    // 5. Listing needs the Console (or an admin key); the own key may not.
    const denied = await t
      .http()
      .patch(`/api/v1/identities/${handle}/settings`)
      .set(key)
      .send({ publicly_discoverable: true })
      .expect(403);
    expect(denied.body.code).toBe('setting_not_permitted');
    await t
      .http()
      .patch(`/api/v1/identities/${handle}/settings`)
      .set(bearer(acme))
      .send({ publicly_discoverable: true })
      .expect(200);
    for (const query of [
      { q: 'quot' },
      { q: 'PRICES parts' },
      { skill: 'QUOTE' },
      { tag: 'sales' },
      { q: handle, tag: 'pricing', skill: 'price quotes' },
    ]) {
      const listed = await t.http().get('/a2a/directory').query(query).expect(200);
      expect(listed.body.agents).toEqual([{ agent_handle: handle, availability: 'available', card }]);
    }

    // 6. The official SDK resolves the card by URL — at the card path, and at the
    //    well-known path relative to the agent's URL — and builds a JSON-RPC client.
    const byCardUrl = await resolveWithSdk(`${t.baseUrl}/a2a/${handle}/card`, '');
    const byWellKnown = await resolveWithSdk(`${t.baseUrl}/a2a/${handle}/`);
    expect(byWellKnown).toEqual(byCardUrl);
    expect(byCardUrl.card).toMatchObject({
      name: 'Quoter',
      description: 'Quotes prices.',
      version: card.version,
      supportedInterfaces: [
        { url: `${PUBLIC_BASE_URL}/a2a/${handle}`, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' },
        { url: `${PUBLIC_BASE_URL}/a2a/${handle}`, protocolBinding: 'JSONRPC', protocolVersion: '0.3', tenant: '' },
        {
          url: `${PUBLIC_BASE_URL}/a2a/${handle}/rest`,
          protocolBinding: 'HTTP+JSON',
          protocolVersion: '1.0',
          tenant: '',
        },
        {
          url: `${PUBLIC_BASE_URL}/a2a/${handle}/rest`,
          protocolBinding: 'HTTP+JSON',
          protocolVersion: '0.3',
          tenant: '',
        },
      ],
      provider: { organization: 'Acme Robotics', url: PUBLIC_BASE_URL },
      capabilities: { streaming: true, pushNotifications: true },
      securitySchemes: {
        apiKey: {
          scheme: { $case: 'apiKeySecurityScheme', value: { location: 'header', name: 'X-API-Key', description: '' } },
        },
        // The key's access tokens (docs/api.md §17), from the token URL the SDK reads here.
        oauth2: {
          scheme: {
            $case: 'oauth2SecurityScheme',
            value: {
              flows: {
                flow: {
                  $case: 'clientCredentials',
                  value: { tokenUrl: `${PUBLIC_BASE_URL}/oauth/token`, scopes: { agent: expect.any(String) } },
                },
              },
              oauth2MetadataUrl: `${PUBLIC_BASE_URL}/.well-known/oauth-authorization-server`,
            },
          },
        },
      },
      securityRequirements: [{ schemes: { apiKey: { list: [] } } }, { schemes: { oauth2: { list: ['agent'] } } }],
      defaultInputModes: ['text/plain', 'application/json'],
      defaultOutputModes: ['text/plain', 'application/json'],
      skills: [{ ...skills[0], inputModes: [], outputModes: [], securityRequirements: [] }],
    });
    expect(byCardUrl).toMatchObject({ transport: 'JsonRpcTransport', endpoint: `${PUBLIC_BASE_URL}/a2a/${handle}` });

    // 7. Disabling 404s the card and drops the listing at once.
    await t.http().patch(`/api/v1/identities/${handle}/settings`).set(key).send({ enabled: false }).expect(200);
    await t.http().get(`/a2a/${handle}/card`).expect(404);
    await t.http().get(`/a2a/${handle}/.well-known/agent-card.json`).expect(404);
    expect((await t.http().get('/a2a/directory').query({ q: handle }).expect(200)).body.agents).toEqual([]);
  });

  it('an expired code claims nothing, and the unclaimed identity keeps its handle reserved', async () => {
    const orphan = await agentSignup(t);
    await t.db.query(`UPDATE identities SET claim_expires_at = now() - interval '1 second' WHERE id = $1`, [orphan.id]);
    const res = await t
      .http()
      .post('/api/v1/identities/claim')
      .set(bearer(acme))
      .send({ claim_code: orphan.claimCode })
      .expect(404);
    expect(res.body.code).toBe('claim_code_invalid');
    expect(
      (await t.http().get(`/api/v1/identities/${orphan.handle}`).set(apiKey(orphan.key)).expect(200)).body,
    ).toMatchObject({ claimed: false });
    await t.http().post('/api/v1/agent-signup').send({ agent_handle: orphan.handle }).expect(409);
    await t.http().post('/api/v1/identities').set(bearer(other)).send({ agent_handle: orphan.handle }).expect(409);
    await t
      .http()
      .patch(`/api/v1/identities/${orphan.handle}/settings`)
      .set(apiKey(orphan.key))
      .send({ enabled: true })
      .expect(403);
  });

  it('an unknown code is the same 404 as a used or expired one', async () => {
    for (const code of ['a2a_clm_' + 'A'.repeat(43), 'nonsense']) {
      const res = await t
        .http()
        .post('/api/v1/identities/claim')
        .set(bearer(acme))
        .send({ claim_code: code })
        .expect(404);
      expect(res.body.code).toBe('claim_code_invalid');
    }
  });

  it('two Console users racing for one code: exactly one claims it', async () => {
    const orphan = await agentSignup(t);
    const results = await Promise.all(
      [acme, other, acme, other].map((account) =>
        t.http().post('/api/v1/identities/claim').set(bearer(account)).send({ claim_code: orphan.claimCode }),
      ),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 404, 404, 404]);
  });

  it("an unclaimed identity's key revokes itself", async () => {
    const orphan = await agentSignup(t);
    await t.http().post('/api-keys/self/revoke').set(apiKey(orphan.key)).expect(200);
    await t.http().get(`/api/v1/identities/${orphan.handle}`).set(apiKey(orphan.key)).expect(401);
  });

  it('an unclaimed key reading another identity learns nothing: 403 whether it exists or not', async () => {
    const orphan = await agentSignup(t);
    const existing = await createIdentity(t, bearer(acme));
    for (const handle of [existing.agent_handle, 'no-such-agent']) {
      const res = await t.http().get(`/api/v1/identities/${handle}`).set(apiKey(orphan.key)).expect(403);
      expect(res.body.code).toBe('identity_unclaimed');
    }
  });

  it('CLAIM_CODE_TTL_HOURS sets the expiry', async () => {
    const short = await startApp({ CLAIM_CODE_TTL_HOURS: '1' });
    try {
      const res = await short
        .http()
        .post('/api/v1/agent-signup')
        .send({ agent_handle: unique('ttl') })
        .expect(201);
      const ttl = Date.parse(res.body.claim.expires_at) - Date.parse(res.body.identity.created_at);
      expect(ttl).toBe(3600_000);
    } finally {
      await short.close();
    }
  });
});
