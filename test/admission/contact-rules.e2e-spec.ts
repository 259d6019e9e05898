import { startApp, type TestApp } from '../support/app';
import {
  apiKey,
  bearer,
  createIdentity,
  insertIdentity,
  mintAdminKey,
  mintAgentKey,
  signup,
  type ConsoleAccount,
  type IdentityFixture,
} from '../support/fixtures';

describe('contact rules', () => {
  let t: TestApp;
  let acme: ConsoleAccount;
  let globex: ConsoleAccount;
  let acmeAdmin: string;
  let billing: IdentityFixture;
  let support: IdentityFixture;
  let partner: IdentityFixture;

  beforeAll(async () => {
    t = await startApp();
    acme = await signup(t, 'Acme');
    globex = await signup(t, 'Globex');
    acmeAdmin = await mintAdminKey(t, acme);
    billing = await insertIdentity(t, { organizationId: acme.organizationId, enabled: true });
    support = await insertIdentity(t, { organizationId: acme.organizationId });
    partner = await insertIdentity(t, { organizationId: globex.organizationId, enabled: true });
  });
  afterAll(() => t.close());

  const peerIdentity = (handle: string) => ({ type: 'identity', handle });
  const peerOrganization = (id: string) => ({ type: 'organization', organization_id: id });
  const create = (auth: Record<string, string>, body: object) =>
    t.http().post('/api/v1/contact-rules').set(auth).send(body);
  const newPeer = async (organizationId: string | null = globex.organizationId) =>
    insertIdentity(t, { organizationId });

  describe('create', () => {
    it('Console creates a rule naming an identity of another organization', async () => {
      const res = await create(bearer(acme), {
        identity: billing.handle,
        direction: 'outbound',
        action: 'allow',
        peer: peerIdentity(partner.handle),
        note: 'invoices',
      }).expect(201);
      expect(res.body).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        identity: billing.handle,
        direction: 'outbound',
        action: 'allow',
        peer: { type: 'identity', handle: partner.handle, organization_id: globex.organizationId },
        skills: [],
        note: 'invoices',
        created_at: expect.any(String),
        updated_at: res.body.created_at,
      });
    });

    it('an admin key creates a rule naming a whole organization', async () => {
      const res = await create(apiKey(acmeAdmin), {
        identity: billing.handle,
        direction: 'inbound',
        action: 'block',
        peer: peerOrganization(globex.organizationId),
      }).expect(201);
      expect(res.body).toMatchObject({
        identity: billing.handle,
        direction: 'inbound',
        action: 'block',
        peer: { type: 'organization', handle: null, organization_id: globex.organizationId },
        note: '',
      });
    });

    it('a peer may be unclaimed; its organization is then null', async () => {
      const loner = await newPeer(null);
      const res = await create(bearer(acme), {
        identity: billing.handle,
        direction: 'both',
        action: 'block',
        peer: peerIdentity(loner.handle),
      }).expect(201);
      expect(res.body.peer).toEqual({ type: 'identity', handle: loner.handle, organization_id: null });
    });

    it('agent keys cannot create rules, not even for their own identity', async () => {
      const own = await mintAgentKey(t, acme, billing.id);
      const res = await create(apiKey(own), {
        identity: billing.handle,
        direction: 'both',
        action: 'allow',
        peer: peerIdentity(partner.handle),
      }).expect(403);
      expect(res.body.code).toBe('agent_key_not_allowed');
    });

    it('refuses a duplicate (same owner, direction and peer) with 409; another direction or peer level is not a duplicate', async () => {
      const owner = await insertIdentity(t, { organizationId: acme.organizationId });
      const peer = await newPeer();
      const body = { identity: owner.handle, direction: 'inbound', action: 'allow', peer: peerIdentity(peer.handle) };
      await create(bearer(acme), body).expect(201);
      const dup = await create(apiKey(acmeAdmin), { ...body, action: 'block' }).expect(409);
      expect(dup.body.code).toBe('contact_rule_exists');
      await create(bearer(acme), { ...body, direction: 'both' }).expect(201);
      await create(bearer(acme), { ...body, peer: peerOrganization(globex.organizationId) }).expect(201);
    });

    it("the owner must be a live identity of the caller's organization (404 otherwise)", async () => {
      const deleted = await insertIdentity(t, { organizationId: acme.organizationId });
      await t.db.query(`UPDATE identities SET status = 'deleted', deleted_at = now() WHERE id = $1`, [deleted.id]);
      for (const owner of [partner.handle, deleted.handle, 'no-such-agent']) {
        const res = await create(bearer(acme), {
          identity: owner,
          direction: 'both',
          action: 'allow',
          peer: peerIdentity(support.handle),
        }).expect(404);
        expect(res.body.code).toBe('identity_not_found');
      }
      const foreign = await create(bearer(globex), {
        identity: billing.handle,
        direction: 'both',
        action: 'allow',
        peer: peerIdentity(partner.handle),
      }).expect(404);
      expect(foreign.body.code).toBe('identity_not_found');
    });

    it('a peer that does not exist is a 404 peer_not_found', async () => {
      const deleted = await newPeer();
      await t.db.query(`UPDATE identities SET status = 'deleted', deleted_at = now() WHERE id = $1`, [deleted.id]);
      const peers = [
        peerIdentity('no-such-agent'),
        peerIdentity(deleted.handle),
        peerOrganization('00000000-0000-4000-8000-000000000000'),
      ];
      for (const peer of peers) {
        const res = await create(bearer(acme), {
          identity: billing.handle,
          direction: 'both',
          action: 'allow',
          peer,
        }).expect(404);
        expect(res.body).toMatchObject({
          code: 'peer_not_found',
          detail: expect.stringMatching(/^No (identity with handle|organization with that id)/),
        });
      }
    });

    it('a rule cannot name its own identity', async () => {
      const res = await create(bearer(acme), {
        identity: billing.handle,
        direction: 'both',
        action: 'allow',
        peer: peerIdentity(billing.handle),
      }).expect(400);
      expect(res.body.code).toBe('invalid_peer');
    });

    it.each([
      ['no peer', { direction: 'both', action: 'allow' }, 'peer'],
      [
        'an unknown direction',
        { direction: 'sideways', action: 'allow', peer: { type: 'identity', handle: 'x-agent' } },
        'direction',
      ],
      [
        'an unknown action',
        { direction: 'both', action: 'maybe', peer: { type: 'identity', handle: 'x-agent' } },
        'action',
      ],
      [
        'an identity peer without a handle',
        { direction: 'both', action: 'allow', peer: { type: 'identity' } },
        'peer.handle',
      ],
      [
        'an organization peer with a bad id',
        { direction: 'both', action: 'allow', peer: { type: 'organization', organization_id: 'acme' } },
        'peer.organization_id',
      ],
      [
        'an identity peer that also names an organization',
        {
          direction: 'both',
          action: 'allow',
          peer: { type: 'identity', handle: 'x-agent', organization_id: '00000000-0000-4000-8000-000000000000' },
        },
        'peer.organization_id',
      ],
      ['an unknown peer type', { direction: 'both', action: 'allow', peer: { type: 'everyone' } }, 'peer.type'],
      [
        'an unknown field',
        { direction: 'both', action: 'allow', peer: { type: 'identity', handle: 'x-agent' }, priority: 1 },
        'priority',
      ],
      [
        'an unknown peer field',
        { direction: 'both', action: 'allow', peer: { type: 'identity', handle: 'x-agent', email: 'x' } },
        'peer.email',
      ],
    ])('400 for %s', async (_, body, field) => {
      const res = await create(bearer(acme), { identity: billing.handle, ...body }).expect(400);
      expect(res.body.code).toBe('validation_failed');
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    });

    it('refuses more than 10,000 rules per identity', async () => {
      const crowded = await insertIdentity(t, { organizationId: acme.organizationId });
      // 9,999 rules straight into the table (the API is not the subject here), then the 10,000th and one more.
      await t.db.query(
        `WITH peers AS (
           INSERT INTO identities (agent_handle) SELECT 'limit-peer-' || g FROM generate_series(1, 9999) g RETURNING id)
         INSERT INTO contact_rules (identity_id, organization_id, direction, action, peer_type, peer_identity_id)
         SELECT $1, $2, 'both', 'allow', 'identity', id FROM peers`,
        [crowded.id, acme.organizationId],
      );
      const body = { identity: crowded.handle, direction: 'both', action: 'allow' };
      await create(bearer(acme), { ...body, peer: peerIdentity((await newPeer()).handle) }).expect(201);
      const res = await create(bearer(acme), { ...body, peer: peerIdentity((await newPeer()).handle) }).expect(409);
      expect(res.body.code).toBe('rule_limit_reached');
    });
  });

  describe('list', () => {
    let lister: ConsoleAccount;
    let own: IdentityFixture;
    let sibling: IdentityFixture;
    let outsider: IdentityFixture;

    beforeAll(async () => {
      lister = await signup(t, 'Lister');
      own = await insertIdentity(t, { organizationId: lister.organizationId, enabled: true });
      sibling = await insertIdentity(t, { organizationId: lister.organizationId });
      outsider = await insertIdentity(t, { organizationId: globex.organizationId });
      for (const [owner, direction, action] of [
        [own, 'inbound', 'allow'],
        [own, 'outbound', 'block'],
        [own, 'both', 'allow'],
        [sibling, 'inbound', 'block'],
        [sibling, 'both', 'allow'],
      ] as const) {
        await create(bearer(lister), {
          identity: owner.handle,
          direction,
          action,
          peer: peerIdentity(outsider.handle),
        }).expect(201);
      }
      // A rule of another organization about the same peer must never show.
      await create(bearer(globex), {
        identity: partner.handle,
        direction: 'both',
        action: 'block',
        peer: peerIdentity(own.handle),
      }).expect(201);
    });

    const list = (auth: Record<string, string>, query = '') =>
      t.http().get(`/api/v1/contact-rules${query}`).set(auth).expect(200);
    const summary = (body: { rules: Array<{ identity: string; direction: string }> }) =>
      body.rules.map((r) => `${r.identity}:${r.direction}`).sort();

    it("admin key and Console see the organization's rules, newest first, and nothing else", async () => {
      const admin = await mintAdminKey(t, lister);
      for (const auth of [bearer(lister), apiKey(admin)]) {
        const res = await list(auth);
        expect(summary(res.body)).toEqual(
          [
            `${own.handle}:both`,
            `${own.handle}:inbound`,
            `${own.handle}:outbound`,
            `${sibling.handle}:both`,
            `${sibling.handle}:inbound`,
          ].sort(),
        );
        const created = res.body.rules.map((r: { created_at: string }) => r.created_at);
        expect(created).toEqual([...created].sort().reverse());
        expect(res.body.next_cursor).toBeNull();
      }
    });

    it('filters by owner, direction and action', async () => {
      expect(summary((await list(bearer(lister), `?identity=${sibling.handle}`)).body)).toEqual([
        `${sibling.handle}:both`,
        `${sibling.handle}:inbound`,
      ]);
      expect(summary((await list(bearer(lister), '?direction=both')).body)).toEqual(
        [`${own.handle}:both`, `${sibling.handle}:both`].sort(),
      );
      expect(summary((await list(bearer(lister), `?identity=${own.handle}&action=block`)).body)).toEqual([
        `${own.handle}:outbound`,
      ]);
    });

    it("an identity filter naming another organization's identity matches nothing", async () => {
      expect((await list(bearer(lister), `?identity=${partner.handle}`)).body).toEqual({
        rules: [],
        next_cursor: null,
      });
      expect((await list(bearer(lister), '?identity=no-such-agent')).body).toEqual({ rules: [], next_cursor: null });
    });

    it("an agent key sees only its own identity's rules", async () => {
      const key = apiKey(await mintAgentKey(t, lister, own.id));
      expect(summary((await list(key)).body)).toEqual([
        `${own.handle}:both`,
        `${own.handle}:inbound`,
        `${own.handle}:outbound`,
      ]);
      expect((await list(key, `?identity=${sibling.handle}`)).body).toEqual({ rules: [], next_cursor: null });
      expect(summary((await list(key, `?identity=${own.handle}&direction=inbound`)).body)).toEqual([
        `${own.handle}:inbound`,
      ]);
    });

    it('pages with limit and cursor, without repeats or gaps', async () => {
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const res = await list(bearer(lister), `?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
        seen.push(...res.body.rules.map((r: { id: string }) => r.id));
        cursor = res.body.next_cursor;
        pages++;
      } while (cursor);
      expect(pages).toBe(3);
      expect(new Set(seen).size).toBe(5);
      await t.http().get('/api/v1/contact-rules?cursor=nonsense').set(bearer(lister)).expect(400);
      await t.http().get('/api/v1/contact-rules?limit=201').set(bearer(lister)).expect(400);
      await t.http().get('/api/v1/contact-rules?direction=sideways').set(bearer(lister)).expect(400);
    });
  });

  describe('update and delete', () => {
    let ruleId: string;
    let peer: IdentityFixture;

    beforeEach(async () => {
      peer = await newPeer();
      const res = await create(bearer(acme), {
        identity: support.handle,
        direction: 'inbound',
        action: 'allow',
        peer: peerIdentity(peer.handle),
      }).expect(201);
      ruleId = res.body.id;
    });

    const patch = (auth: Record<string, string>, body: object, id = ruleId) =>
      t.http().patch(`/api/v1/contact-rules/${id}`).set(auth).send(body);

    it('changes action, direction and note; updated_at moves only on a change', async () => {
      const before = (await patch(bearer(acme), {}).expect(200)).body;
      const same = (await patch(bearer(acme), { action: 'allow' }).expect(200)).body;
      expect(same).toEqual(before);
      await new Promise((resolve) => setTimeout(resolve, 5));
      const res = await patch(apiKey(acmeAdmin), { action: 'block', direction: 'both', note: 'spam' }).expect(200);
      expect(res.body).toEqual({
        ...before,
        action: 'block',
        direction: 'both',
        note: 'spam',
        updated_at: expect.any(String),
      });
      expect(Date.parse(res.body.updated_at)).toBeGreaterThan(Date.parse(before.updated_at));
    });

    it('a direction that would duplicate another rule is a 409, and nothing changes', async () => {
      await create(bearer(acme), {
        identity: support.handle,
        direction: 'both',
        action: 'block',
        peer: peerIdentity(peer.handle),
      }).expect(201);
      const res = await patch(bearer(acme), { direction: 'both' }).expect(409);
      expect(res.body.code).toBe('contact_rule_exists');
      expect((await patch(bearer(acme), {}).expect(200)).body.direction).toBe('inbound');
    });

    it('owner and peer cannot be changed', async () => {
      for (const body of [{ identity: billing.handle }, { peer: peerIdentity(partner.handle) }]) {
        expect((await patch(bearer(acme), body).expect(400)).body.code).toBe('validation_failed');
      }
    });

    it('another organization gets 404 and the rule is untouched', async () => {
      const otherAdmin = await mintAdminKey(t, globex);
      for (const auth of [bearer(globex), apiKey(otherAdmin)]) {
        expect((await patch(auth, { action: 'block' }).expect(404)).body.code).toBe('contact_rule_not_found');
        expect((await t.http().delete(`/api/v1/contact-rules/${ruleId}`).set(auth).expect(404)).body.code).toBe(
          'contact_rule_not_found',
        );
      }
      expect((await patch(bearer(acme), {}).expect(200)).body.action).toBe('allow');
    });

    it('deletes: 204, then 404, and the rule is gone from the list', async () => {
      await t.http().delete(`/api/v1/contact-rules/${ruleId}`).set(apiKey(acmeAdmin)).expect(204);
      await t.http().delete(`/api/v1/contact-rules/${ruleId}`).set(bearer(acme)).expect(404);
      await patch(bearer(acme), { action: 'block' }).expect(404);
      const list = await t
        .http()
        .get(`/api/v1/contact-rules?identity=${support.handle}&limit=200`)
        .set(bearer(acme))
        .expect(200);
      expect(list.body.rules.map((r: { id: string }) => r.id)).not.toContain(ruleId);
    });

    it('an id that is not a UUID names no rule', async () => {
      expect((await patch(bearer(acme), {}, 'not-a-uuid').expect(404)).body.code).toBe('contact_rule_not_found');
    });
  });

  describe('skills (docs/api.md §16)', () => {
    const skill = (id: string, visibility = 'public') => ({ id, name: id, description: '', tags: [], visibility });
    let owner: string;
    let foreign: string;
    let sibling: string;

    beforeAll(async () => {
      const card = { skills: [skill('translate'), skill('summarize'), skill('audit', 'admitted')] };
      owner = (await createIdentity(t, bearer(acme), card)).agent_handle;
      sibling = (await createIdentity(t, bearer(acme), card)).agent_handle;
      foreign = (await createIdentity(t, bearer(globex), card)).agent_handle;
    });

    const rule = (body: object) =>
      create(bearer(acme), {
        identity: owner,
        direction: 'inbound',
        action: 'block',
        peer: peerIdentity(foreign),
        ...body,
      });
    const refusal = async (res: Promise<{ body: { code: string; errors: unknown[] } }>) => {
      const { body } = await res;
      expect(body.code).toBe('validation_failed');
      return body.errors;
    };

    it("an inbound or both rule names skills of the owner's card, stored sorted and without repeats", async () => {
      const res = await rule({ skills: ['translate', 'audit', 'translate'] }).expect(201);
      expect(res.body.skills).toEqual(['audit', 'translate']);
      expect((await rule({ direction: 'both', skills: ['summarize'] }).expect(201)).body.skills).toEqual(['summarize']);
      expect(await refusal(rule({ skills: ['juggle', 'translate'] }).expect(400))).toEqual([
        { field: 'skills', message: expect.stringContaining(`'juggle', not a skill of ${owner}'s card`) },
      ]);
      const many = Array.from({ length: 21 }, (_, i) => `s${i}`);
      expect(await refusal(rule({ skills: many }).expect(400))).toEqual([expect.objectContaining({ field: 'skills' })]);
    });

    it("an outbound rule names skills of the peer identity's card as others see it; an organization's, unchecked", async () => {
      const outbound = { direction: 'outbound', action: 'allow' };
      await rule({ ...outbound, skills: ['translate'] }).expect(201);
      // Another organization's admitted skill is not on the card its peers see.
      expect(await refusal(rule({ ...outbound, skills: ['audit'] }).expect(400))).toEqual([
        { field: 'skills', message: expect.stringContaining(`not a skill of ${foreign}'s card`) },
      ]);
      await rule({ ...outbound, peer: peerIdentity(sibling), skills: ['audit'] }).expect(201);
      await rule({ ...outbound, peer: peerOrganization(globex.organizationId), skills: ['anything'] }).expect(201);
    });

    it('a rule names at most 20 skills, on create and on PATCH', async () => {
      // An outbound rule naming an organization: its skills are checked against no card, so the limit alone refuses.
      const toGlobex = { direction: 'outbound', action: 'allow', peer: peerOrganization(globex.organizationId) };
      const skills = (n: number) => Array.from({ length: n }, (_, i) => `limit-${String(i).padStart(2, '0')}`);
      const { id } = (await rule({ ...toGlobex, skills: skills(20) }).expect(201)).body;
      const tooMany = [{ field: 'skills', message: expect.stringContaining('20') }];
      expect(await refusal(rule({ ...toGlobex, skills: skills(21) }).expect(400))).toEqual(tooMany);
      const patch = (body: object) => t.http().patch(`/api/v1/contact-rules/${id}`).set(bearer(acme)).send(body);
      expect(await refusal(patch({ skills: skills(21) }).expect(400))).toEqual(tooMany);
      expect((await patch({ skills: skills(20).reverse() }).expect(200)).body.skills).toEqual(skills(20));
    });

    it('rules that differ by their skills are not duplicates; the same skills in another order are', async () => {
      const base = { direction: 'both', action: 'allow', peer: peerIdentity(sibling) };
      await rule(base).expect(201);
      await rule({ ...base, skills: ['translate'] }).expect(201);
      await rule({ ...base, skills: ['summarize', 'translate'] }).expect(201);
      const duplicate = await create(bearer(acme), {
        identity: owner,
        ...base,
        skills: ['translate', 'summarize'],
      }).expect(409);
      expect(duplicate.body.code).toBe('contact_rule_exists');
    });

    it('PATCH replaces the skills, checked against the card of the direction the rule ends up with', async () => {
      const peer = (await createIdentity(t, bearer(globex), { skills: [skill('translate')] })).agent_handle;
      const { id } = (await rule({ peer: peerIdentity(peer), skills: ['summarize'] }).expect(201)).body;
      const patch = (body: object) => t.http().patch(`/api/v1/contact-rules/${id}`).set(bearer(acme)).send(body);
      // The peer's card has no `summarize`: the rule cannot turn outbound with it.
      await refusal(patch({ direction: 'outbound' }).expect(400));
      await refusal(patch({ skills: ['juggle'] }).expect(400));
      expect((await patch({ direction: 'outbound', skills: ['translate'] }).expect(200)).body).toMatchObject({
        direction: 'outbound',
        skills: ['translate'],
      });
      expect((await patch({ skills: [] }).expect(200)).body.skills).toEqual([]);
    });
  });
});
