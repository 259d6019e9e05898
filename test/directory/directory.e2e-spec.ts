import { randomBytes } from 'node:crypto';
import { WALK_LIMIT } from '../../src/identities/identity-search.service';
import { startApp, type TestApp } from '../support/app';
import {
  agentSignup,
  apiKey,
  bearer,
  createEnabledIdentity,
  createIdentity,
  mintAdminKey,
  signup,
  unique,
  type ConsoleAccount,
} from '../support/fixtures';

const PUBLIC_BASE_URL = 'https://agents.example.test';
/** A word no other identity of the file uses, so a search sees only its own fixtures. */
const marker = (prefix: string) => `${prefix}${randomBytes(4).toString('hex')}`;

type Agent = { agent_handle: string; card: Record<string, unknown> };

describe('discovery', () => {
  let t: TestApp;
  let acme: ConsoleAccount;
  let other: ConsoleAccount;

  beforeAll(async () => {
    t = await startApp({ PUBLIC_BASE_URL });
    acme = await signup(t, 'Acme');
    other = await signup(t, 'Other');
  });
  afterAll(() => t.close());

  /** A claimed, enabled, publicly discoverable identity of `account`. */
  async function listed(account: ConsoleAccount, body: Record<string, unknown> = {}) {
    const identity = await createEnabledIdentity(t, account, body);
    await t
      .http()
      .patch(`/api/v1/identities/${identity.handle}/settings`)
      .set(bearer(account))
      .send({ publicly_discoverable: true })
      .expect(200);
    return identity;
  }

  /** Every page of the public directory for `query`, following next_cursor. */
  async function allPages(query: Record<string, string | number>): Promise<{ handles: string[]; pages: number }> {
    const handles: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: { body: { agents: Agent[]; next_cursor: string | null } } = await t
        .http()
        .get('/a2a/directory')
        .query({ ...query, ...(cursor ? { cursor } : {}) })
        .expect(200);
      handles.push(...res.body.agents.map((a) => a.agent_handle));
      cursor = res.body.next_cursor;
      pages++;
    } while (cursor);
    return { handles, pages };
  }

  describe('Agent Card', () => {
    it('is served per generation with the docs/api.md §4 shape, a strong ETag and Cache-Control, at both paths', async () => {
      const { handle } = await createEnabledIdentity(t, acme, { description: 'Plain.' });
      const res = await t.http().get(`/a2a/${handle}/card`).expect(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.headers['cache-control']).toBe('public, max-age=60');
      expect(res.headers.etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
      expect(res.headers.vary).toMatch(/A2A-Version/i);
      const url = `${PUBLIC_BASE_URL}/a2a/${handle}`;
      // Every card declares the skill extension (docs/api.md §16).
      const extensions = [
        {
          uri: `${PUBLIC_BASE_URL}/extensions/skill/v1`,
          description: "Names the skill a message calls: the skill's id in the message's metadata under this URI.",
        },
      ];
      // Either scheme: the key, or an access token for it from the token endpoint (docs/api.md §17).
      const oauth2 = {
        flows: {
          clientCredentials: {
            tokenUrl: `${PUBLIC_BASE_URL}/oauth/token`,
            scopes: { agent: 'Act as the agent identity of the key.' },
          },
        },
        oauth2MetadataUrl: `${PUBLIC_BASE_URL}/.well-known/oauth-authorization-server`,
      };
      const supportedInterfaces = [
        { url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
        { url, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
        { url: `${url}/rest`, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
        { url: `${url}/rest`, protocolBinding: 'HTTP+JSON', protocolVersion: '0.3' },
      ];
      // No A2A-Version: the v0.3 hybrid card.
      expect(res.body).toEqual({
        name: handle,
        description: 'Plain.',
        version: '1',
        url,
        preferredTransport: 'JSONRPC',
        protocolVersion: '0.3.0',
        additionalInterfaces: [
          { url, transport: 'JSONRPC' },
          { url: `${url}/rest`, transport: 'HTTP+JSON' },
        ],
        provider: { organization: 'Acme', url: PUBLIC_BASE_URL },
        capabilities: { streaming: true, pushNotifications: true, extensions },
        supportsAuthenticatedExtendedCard: true,
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
          oauth2: { type: 'oauth2', description: expect.any(String), ...oauth2 },
        },
        security: [{ apiKey: [] }, { oauth2: ['agent'] }],
        defaultInputModes: ['text/plain', 'application/json'],
        defaultOutputModes: ['text/plain', 'application/json'],
        // No skill described: the card's one skill stands for the agent (docs/api.md §4).
        skills: [{ id: 'agent', name: handle, description: 'Plain.', tags: ['agent'] }],
        supportedInterfaces,
        signatures: [{ protected: expect.any(String), signature: expect.any(String) }],
      });
      const v1 = await t.http().get(`/a2a/${handle}/card`).set('A2A-Version', '1.0').expect(200);
      expect(v1.body).toEqual({
        name: handle,
        description: 'Plain.',
        version: '1',
        supportedInterfaces,
        provider: { organization: 'Acme', url: PUBLIC_BASE_URL },
        capabilities: { streaming: true, pushNotifications: true, extendedAgentCard: true, extensions },
        securitySchemes: {
          apiKey: { apiKeySecurityScheme: { location: 'header', name: 'X-API-Key' } },
          oauth2: { oauth2SecurityScheme: { description: expect.any(String), ...oauth2 } },
        },
        securityRequirements: [{ schemes: { apiKey: {} } }, { schemes: { oauth2: { list: ['agent'] } } }],
        defaultInputModes: ['text/plain', 'application/json'],
        defaultOutputModes: ['text/plain', 'application/json'],
        skills: [{ id: 'agent', name: handle, description: 'Plain.', tags: ['agent'] }],
        signatures: [{ protected: expect.any(String), signature: expect.any(String) }],
      });
      for (const version of [undefined, '1.0']) {
        const direct = version ? v1 : res;
        const wellKnown = t.http().get(`/a2a/${handle}/.well-known/agent-card.json`);
        const again = await (version ? wellKnown.set('A2A-Version', version) : wellKnown).expect(200);
        expect(again.body).toEqual(direct.body);
        expect(again.headers.etag).toBe(direct.headers.etag);
      }
    });

    it('304 on a matching If-None-Match; a change gives a new version and ETag', async () => {
      const { handle, key } = await createEnabledIdentity(t, acme, { display_name: 'Before' });
      const first = await t.http().get(`/a2a/${handle}/card`).expect(200);
      const etag = first.headers.etag;
      const cached = await t.http().get(`/a2a/${handle}/card`).set('If-None-Match', etag).expect(304);
      expect(cached.text).toBe('');
      expect(cached.headers.etag).toBe(etag);
      await t.http().get(`/a2a/${handle}/card`).set('If-None-Match', `W/"x", ${etag}`).expect(304);
      // fetch() adds Cache-Control: no-cache to conditional requests; that binds caches, not the origin.
      await t.http().get(`/a2a/${handle}/card`).set('If-None-Match', etag).set('Cache-Control', 'no-cache').expect(304);
      const viaFetch = await fetch(`${t.baseUrl}/a2a/${handle}/.well-known/agent-card.json`, {
        headers: { 'If-None-Match': etag },
      });
      expect(viaFetch.status).toBe(304);
      const head = await t.http().head(`/a2a/${handle}/card`).expect(200);
      expect(head.headers.etag).toBe(etag);
      await t.http().get(`/a2a/${handle}/card`).set('If-None-Match', '"something-else"').expect(200);

      await t.http().patch(`/api/v1/identities/${handle}`).set(apiKey(key)).send({ display_name: 'After' }).expect(200);
      const changed = await t.http().get(`/a2a/${handle}/card`).set('If-None-Match', etag).expect(200);
      expect(changed.body).toMatchObject({ name: 'After', version: String(Number(first.body.version) + 1) });
      expect(changed.headers.etag).not.toBe(etag);
    });

    it('is served whatever the directory visibility (docs/api.md §4: no credential, whatever publicly_discoverable says)', async () => {
      const { handle } = await createEnabledIdentity(t, acme);
      expect((await t.http().get(`/api/v1/identities/${handle}`).set(bearer(acme))).body.publicly_discoverable).toBe(
        false,
      );
      await t.http().get(`/a2a/${handle}/card`).expect(200);
    });

    it('404 unless claimed, enabled and not deleted', async () => {
      const disabled = await createIdentity(t, bearer(acme));
      const unclaimed = await agentSignup(t);
      const deleted = await createEnabledIdentity(t, acme);
      await t.http().delete(`/api/v1/identities/${deleted.handle}`).set(bearer(acme)).expect(204);
      for (const handle of [disabled.agent_handle, unclaimed.handle, deleted.handle, 'no-such-agent', 'NOT_A_HANDLE']) {
        for (const path of [`/a2a/${handle}/card`, `/a2a/${handle}/.well-known/agent-card.json`]) {
          const res = await t.http().get(path).expect(404);
          expect(res.body.code).toBe('agent_not_found');
          expect(res.headers['cache-control']).toBeUndefined();
        }
      }
    });

    it('takes its URLs from PUBLIC_BASE_URL, never from Host or X-Forwarded-Host', async () => {
      const { handle } = await createEnabledIdentity(t, acme);
      const res = await t
        .http()
        .get(`/a2a/${handle}/card`)
        .set('Host', 'evil.example')
        .set('X-Forwarded-Host', 'evil.example')
        .expect(200);
      expect(JSON.stringify(res.body)).not.toContain('evil.example');
      expect(res.body.url).toBe(`${PUBLIC_BASE_URL}/a2a/${handle}`);
    });
  });

  describe('public directory', () => {
    it('lists only claimed, enabled, publicly discoverable, non-deleted identities, of every organization', async () => {
      const word = marker('zebra');
      const body = { description: `Keeps ${word} records.` };
      const shown = [await listed(acme, body), await listed(other, body)];
      // Not listed: enabled but not discoverable, discoverable but disabled, unclaimed,
      // deleted, disabled again.
      await createEnabledIdentity(t, acme, body);
      await createIdentity(t, bearer(acme), { ...body, publicly_discoverable: true });
      await agentSignup(t, body);
      const gone = await listed(acme, body);
      await t.http().delete(`/api/v1/identities/${gone.handle}`).set(bearer(acme)).expect(204);
      const disabled = await listed(acme, body);
      await t
        .http()
        .patch(`/api/v1/identities/${disabled.handle}/settings`)
        .set(apiKey(disabled.key))
        .send({ enabled: false })
        .expect(200);

      const res = await t.http().get('/a2a/directory').query({ q: word }).expect(200);
      expect(res.body.next_cursor).toBeNull();
      expect(res.body.agents.map((a: Agent) => a.agent_handle).sort()).toEqual(shown.map((s) => s.handle).sort());
      for (const agent of res.body.agents as Agent[]) {
        expect(agent.card).toEqual((await t.http().get(`/a2a/${agent.agent_handle}/card`).expect(200)).body);
      }
    });

    it('q finds handles whose parts the text parser reads as numbers (3e022f41, 34821630, 12e4)', async () => {
      const suffix = randomBytes(2).toString('hex').replace(/[a-f]/g, '7');
      const handles = [`num-3e022f41-${suffix}`, `num-34821630${suffix}`, `num-12e4-${suffix}`, `num-1e5x-${suffix}`];
      for (const handle of handles) {
        await listed(acme, { agent_handle: handle });
      }
      for (const handle of handles) {
        const found = (q: string) =>
          t
            .http()
            .get('/a2a/directory')
            .query({ q })
            .expect(200)
            .then((res) => (res.body.agents as Agent[]).map((a) => a.agent_handle));
        // Found first: the others share some of its words, but not all.
        expect((await found(handle))[0]).toBe(handle);
        expect((await found(handle.split('-').slice(1).join(' ')))[0]).toBe(handle);
      }
    });

    it('q searches handle, name, description and skills by word prefix, any case, cards holding every word first', async () => {
      const word = marker('okapi');
      const a = await listed(acme, {
        display_name: `Ledger ${word}`,
        description: 'Reconciles bank statements.',
        skills: [
          {
            id: 'recon',
            name: 'Reconciliation',
            description: 'Matches payments to invoices.',
            tags: ['Accounting'],
            examples: ['Match March payouts'],
          },
        ],
      });
      const b = await listed(acme, { display_name: `Courier ${word}`, description: 'Delivers parcels.' });
      const ranked = async (q: string) =>
        ((await t.http().get('/a2a/directory').query({ q }).expect(200)).body.agents as Agent[]).map(
          (x) => x.agent_handle,
        );
      const search = async (q: string) => (await ranked(q)).sort();

      expect(await search(word)).toEqual([a.handle, b.handle].sort());
      expect(await search(word.toUpperCase())).toEqual([a.handle, b.handle].sort());
      // Any word finds a card (the prefix, the stem, in any field); the card holding both comes first.
      for (const second of ['ledg', 'statements', 'reconcil', 'payments', 'accounting', 'march']) {
        expect(await ranked(`${word} ${second}`)).toEqual([a.handle, b.handle]);
        expect(await ranked(`${second} ${marker('nothing')}`)).toContain(a.handle);
      }
      expect(await ranked(`${word} parcels`)).toEqual([b.handle, a.handle]);
      expect((await ranked(b.handle))[0]).toBe(b.handle);
      expect(await search(`${marker('nothing')} ${marker('like')}`)).toEqual([]);
    });

    it.each([`' OR 1=1 --`, 'a & b | !c', ':*', '((', '\\', 'naïve café', '%_', '   '])(
      'never fails on hostile q %j',
      async (q) => {
        await t.http().get('/a2a/directory').query({ q }).expect(200);
      },
    );

    it('skill matches a skill id or name, tag a skill tag, case-insensitively; filters combine', async () => {
      const word = marker('lynx');
      const a = await listed(acme, {
        description: word,
        skills: [{ id: 'Translate', name: 'Translation', description: 'Translates text.', tags: ['Language', 'text'] }],
      });
      const b = await listed(other, {
        description: word,
        skills: [{ id: 'summarize', name: 'Summaries', description: 'Summarizes text.', tags: ['text'] }],
      });
      const find = async (query: Record<string, string>) =>
        (
          (
            await t
              .http()
              .get('/a2a/directory')
              .query({ q: word, ...query })
              .expect(200)
          ).body.agents as Agent[]
        )
          .map((x) => x.agent_handle)
          .sort();

      expect(await find({ skill: 'translate' })).toEqual([a.handle]);
      expect(await find({ skill: 'SUMMARIES' })).toEqual([b.handle]);
      expect(await find({ tag: 'TEXT' })).toEqual([a.handle, b.handle].sort());
      expect(await find({ tag: 'language' })).toEqual([a.handle]);
      expect(await find({ tag: 'text', skill: 'summarize' })).toEqual([b.handle]);
      expect(await find({ tag: 'lang' })).toEqual([]);
      expect(await find({ skill: 'translation', tag: 'missing' })).toEqual([]);
    });

    it('pages with a cursor, newest first among equally relevant agents, every agent exactly once', async () => {
      const word = marker('heron');
      const created: string[] = [];
      for (let i = 0; i < 7; i++) {
        // Handles of one shape, so every card scores alike and only creation time orders them.
        const agent_handle = `${word}-agent-${i + 1}`;
        created.push((await listed(i % 2 ? other : acme, { agent_handle, description: word })).handle);
      }
      const { handles, pages } = await allPages({ q: word, limit: 3 });
      expect(pages).toBe(3);
      expect(handles).toEqual([...created].reverse());
      expect((await allPages({ q: word, limit: 200 })).handles).toEqual(handles);
    });

    it(`finds matches behind more than WALK_LIMIT (${WALK_LIMIT}) newer rows, and pages exactly through more matches than that`, async () => {
      const common = marker('bison');
      const rare = marker('narwhal');
      const oldest = await listed(acme, {
        description: `${common} ${rare}`,
        skills: [{ id: rare, name: 'Rare', description: '', tags: [rare] }],
      });
      const bulk = WALK_LIMIT + 150;
      await t.db.query(
        `INSERT INTO identities (agent_handle, organization_id, claimed_at, enabled, publicly_discoverable, description, created_at)
         SELECT $1 || '-' || g, $2, now(), true, true, $3, now() + make_interval(secs => g) FROM generate_series(1, $4::int) g`,
        [common, acme.organizationId, `About ${common}.`, bulk],
      );
      for (const query of [{ q: rare }, { q: `${common} ${rare}` }, { tag: rare }, { skill: rare }]) {
        const res = await t.http().get('/a2a/directory').query(query).expect(200);
        expect(res.body.agents.map((a: Agent) => a.agent_handle)).toEqual([oldest.handle]);
      }
      const { handles, pages } = await allPages({ q: common, limit: 200 });
      const expected = Array.from({ length: bulk }, (_, i) => `${common}-${bulk - i}`).concat(oldest.handle);
      expect(pages).toBe(Math.ceil(expected.length / 200));
      expect(handles).toEqual(expected);
    });

    it('rejects bad parameters with 400', async () => {
      for (const query of [
        { limit: 0 },
        { limit: 201 },
        { limit: 'ten' },
        { q: 'x'.repeat(201) },
        { tag: 'x'.repeat(51) },
        { unknown: 1 },
      ]) {
        expect((await t.http().get('/a2a/directory').query(query)).status).toBe(400);
      }
      expect((await t.http().get('/a2a/directory').query({ cursor: 'nope' }).expect(400)).body.code).toBe(
        'invalid_cursor',
      );
      expect((await t.http().get('/a2a/directory?q=a&q=b').expect(400)).body.errors[0].field).toBe('q');
    });
  });

  describe('organization directory', () => {
    it("lists every identity of the caller's organization with its state, and nothing else", async () => {
      const org = await signup(t, 'Directory Org');
      const word = marker('ibis');
      const enabled = await createEnabledIdentity(t, org, { description: word });
      const disabled = await createIdentity(t, bearer(org), { description: word, mint_key: true });
      const deleted = await createIdentity(t, bearer(org), { description: word });
      await t.http().delete(`/api/v1/identities/${deleted.agent_handle}`).set(bearer(org)).expect(204);
      const claimedLater = await agentSignup(t, { description: word });
      const neverClaimed = await agentSignup(t, { description: word });
      await t
        .http()
        .post('/api/v1/identities/claim')
        .set(bearer(org))
        .send({ claim_code: claimedLater.claimCode })
        .expect(200);
      await listed(acme, { description: word });

      const admin = apiKey(await mintAdminKey(t, org));
      for (const auth of [bearer(org), admin, apiKey(enabled.key), apiKey(disabled.api_key!.key)]) {
        const res = await t.http().get('/api/v1/identities/a2a/directory').set(auth).expect(200);
        expect(res.body.next_cursor).toBeNull();
        const byHandle = Object.fromEntries(
          res.body.identities.map((i: { agent_handle: string }) => [i.agent_handle, i]),
        );
        expect(Object.keys(byHandle).sort()).toEqual(
          [enabled.handle, disabled.agent_handle, deleted.agent_handle, claimedLater.handle].sort(),
        );
        expect(byHandle[enabled.handle]).toMatchObject({
          enabled: true,
          claimed: true,
          status: 'active',
          organization_id: org.organizationId,
        });
        expect(byHandle[disabled.agent_handle]).toMatchObject({ enabled: false, status: 'active' });
        expect(byHandle[deleted.agent_handle]).toMatchObject({ enabled: false, status: 'deleted' });
        expect(byHandle[claimedLater.handle]).toMatchObject({ claimed: true, enabled: false });
        expect(byHandle[neverClaimed.handle]).toBeUndefined();
      }

      const ranked = async (query: Record<string, string | number>) =>
        (
          (await t.http().get('/api/v1/identities/a2a/directory').query(query).set(admin).expect(200)).body
            .identities as Array<{ agent_handle: string }>
        ).map((i) => i.agent_handle);
      const list = async (query: Record<string, string | number>) => (await ranked(query)).sort();
      expect(await list({ enabled: 'true' })).toEqual([enabled.handle]);
      expect(await list({ enabled: 'false' })).toEqual(
        [disabled.agent_handle, deleted.agent_handle, claimedLater.handle].sort(),
      );
      expect(await list({ claimed: 'false' })).toEqual([]);
      expect(await list({ claimed: 'true', status: 'deleted' })).toEqual([deleted.agent_handle]);
      // A search finds the organization's identities whatever their state, never another's.
      expect(await list({ q: word })).toEqual(
        [enabled.handle, disabled.agent_handle, deleted.agent_handle, claimedLater.handle].sort(),
      );
      expect((await ranked({ q: enabled.handle }))[0]).toBe(enabled.handle);
      expect(await list({ q: marker('nothing') })).toEqual([]);
      expect((await list({ limit: 2 })).length).toBe(2);
    });

    it('rejects bad parameters with 400', async () => {
      for (const query of [
        { enabled: 'maybe' },
        { claimed: '1' },
        { status: 'gone' },
        { limit: 500 },
        { organization_id: acme.organizationId },
      ]) {
        expect((await t.http().get('/api/v1/identities/a2a/directory').query(query).set(bearer(acme))).status).toBe(
          400,
        );
      }
    });

    it('pages with a cursor', async () => {
      const org = await signup(t, unique('Pager'));
      const created: string[] = [];
      for (let i = 0; i < 5; i++) {
        created.push((await createIdentity(t, bearer(org))).agent_handle);
      }
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const res: { body: { identities: Array<{ agent_handle: string }>; next_cursor: string | null } } = await t
          .http()
          .get('/api/v1/identities/a2a/directory')
          .query({ limit: 2, ...(cursor ? { cursor } : {}) })
          .set(bearer(org))
          .expect(200);
        seen.push(...res.body.identities.map((i) => i.agent_handle));
        cursor = res.body.next_cursor;
      } while (cursor);
      expect(seen).toEqual([...created].reverse());
    });
  });
});
