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
  type AuthHeaders,
  type ConsoleAccount,
} from '../support/fixtures';

const skill = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  name: `Skill ${id}`,
  description: `Does ${id}.`,
  tags: ['finance'],
  ...extra,
});

describe('identities', () => {
  let t: TestApp;
  let acme: ConsoleAccount;
  let other: ConsoleAccount;
  let acmeAdmin: AuthHeaders;

  beforeAll(async () => {
    t = await startApp();
    acme = await signup(t, 'Acme');
    other = await signup(t, 'Other');
    acmeAdmin = apiKey(await mintAdminKey(t, acme));
  });
  afterAll(() => t.close());

  describe('create', () => {
    it('Console creates a claimed identity with its receiver disabled and the defaults of docs/api.md §3', async () => {
      const handle = unique('billing');
      const res = await t
        .http()
        .post('/api/v1/identities')
        .set(bearer(acme))
        .send({ agent_handle: handle, display_name: 'Billing', description: 'Invoices.', skills: [skill('invoices')] })
        .expect(201);
      expect(res.body).toEqual({
        id: expect.any(String),
        agent_handle: handle,
        organization_id: acme.organizationId,
        display_name: 'Billing',
        description: 'Invoices.',
        skills: [{ ...skill('invoices'), visibility: 'public' }],
        claimed: true,
        claimed_at: expect.any(String),
        enabled: false,
        publicly_discoverable: false,
        allow_public_egress: false,
        filter_mode: 'whitelist',
        require_skill: false,
        status: 'active',
        card_url: `${t.config.publicBaseUrl}/a2a/${handle}/card`,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      });
      const [row] = await t.db.query(`SELECT claim_code_hash FROM identities WHERE id = $1`, [res.body.id]);
      expect(row.claim_code_hash).toBeNull();
    });

    it('an admin key creates one with settings; mint_key returns a bound agent key once', async () => {
      const res = await t
        .http()
        .post('/api/v1/identities')
        .set(acmeAdmin)
        .send({
          agent_handle: unique('sales'),
          publicly_discoverable: true,
          allow_public_egress: true,
          filter_mode: 'blacklist',
          mint_key: true,
        })
        .expect(201);
      expect(res.body).toMatchObject({
        publicly_discoverable: true,
        allow_public_egress: true,
        filter_mode: 'blacklist',
        enabled: false,
      });
      const self = await t.http().get('/api-keys/self').set(acmeAdmin).expect(200);
      expect(res.body.api_key).toMatchObject({
        scope: 'agent',
        scoped_identity_id: res.body.id,
        organization_id: acme.organizationId,
        status: 'active',
        created_by: { type: 'api_key', id: self.body.id },
        key: expect.stringMatching(/^a2a_agt_/),
      });
      const keySelf = await t.http().get('/api-keys/self').set(apiKey(res.body.api_key.key)).expect(200);
      expect(keySelf.body).toMatchObject({ id: res.body.api_key.id, scoped_identity_id: res.body.id });
      expect(keySelf.body).not.toHaveProperty('key');
    });

    it('without mint_key there is no api_key', async () => {
      const res = await t
        .http()
        .post('/api/v1/identities')
        .set(bearer(acme))
        .send({ agent_handle: unique('plain'), mint_key: false })
        .expect(201);
      expect(res.body).not.toHaveProperty('api_key');
    });
  });

  describe('read', () => {
    it('admin key, Console and the own key read it; the own key of an unclaimed identity reads itself', async () => {
      const own = await createEnabledIdentity(t, acme);
      for (const auth of [acmeAdmin, bearer(acme), apiKey(own.key)]) {
        const res = await t.http().get(`/api/v1/identities/${own.handle}`).set(auth).expect(200);
        expect(res.body).toMatchObject({ id: own.id, agent_handle: own.handle, enabled: true });
        expect(JSON.stringify(res.body)).not.toMatch(/claim_code|hash/);
      }
      const orphan = await agentSignup(t);
      const self = await t.http().get(`/api/v1/identities/${orphan.handle}`).set(apiKey(orphan.key)).expect(200);
      expect(self.body).toMatchObject({ claimed: false, organization_id: null, claimed_at: null });
    });

    it('a handle that does not exist, or cannot exist, is a 404', async () => {
      for (const handle of ['no-such-agent', 'Not_A_Handle', 'x']) {
        const res = await t.http().get(`/api/v1/identities/${handle}`).set(bearer(acme)).expect(404);
        expect(res.body.code).toBe('identity_not_found');
      }
    });
  });

  describe('card edit', () => {
    it('the own key, an admin key and Console edit display_name, description and skills', async () => {
      const own = await createEnabledIdentity(t, acme);
      const edits: Array<[AuthHeaders, Record<string, unknown>]> = [
        [apiKey(own.key), { skills: [skill('quotes', { examples: ['Quote 12 units'] })] }],
        [acmeAdmin, { display_name: 'Quotes' }],
        [bearer(acme), { description: 'Prices things.' }],
      ];
      for (const [auth, body] of edits) {
        const res = await t.http().patch(`/api/v1/identities/${own.handle}`).set(auth).send(body).expect(200);
        expect(res.body).toMatchObject(body);
      }
      const res = await t.http().get(`/api/v1/identities/${own.handle}`).set(bearer(acme)).expect(200);
      expect(res.body).toMatchObject({
        display_name: 'Quotes',
        description: 'Prices things.',
        skills: [skill('quotes', { examples: ['Quote 12 units'] })],
      });
    });

    it('a change bumps the card version; a no-op does not; skills: [] clears', async () => {
      const own = await createEnabledIdentity(t, acme, { skills: [skill('a')] });
      const version = async () => (await t.http().get(`/a2a/${own.handle}/card`).expect(200)).body.version;
      const before = await version();
      await t
        .http()
        .patch(`/api/v1/identities/${own.handle}`)
        .set(apiKey(own.key))
        .send({ skills: [skill('a')] })
        .expect(200);
      expect(await version()).toBe(before);
      await t.http().patch(`/api/v1/identities/${own.handle}`).set(apiKey(own.key)).send({}).expect(200);
      expect(await version()).toBe(before);
      const cleared = await t
        .http()
        .patch(`/api/v1/identities/${own.handle}`)
        .set(apiKey(own.key))
        .send({ skills: [] })
        .expect(200);
      expect(cleared.body.skills).toEqual([]);
      expect(Number(await version())).toBe(Number(before) + 1);
    });
  });

  describe('settings: the permission table of docs/api.md §3, per field and credential kind', () => {
    const VALUES = {
      enabled: true,
      allow_public_egress: true,
      publicly_discoverable: true,
      filter_mode: 'blacklist',
      require_skill: true,
      daily_task_quota: 500,
      monthly_cost_budget: { amount: '25', currency: 'USD' },
    } as const;
    type Field = keyof typeof VALUES;
    const DEFAULTS = {
      enabled: false,
      allow_public_egress: false,
      publicly_discoverable: false,
      filter_mode: 'whitelist',
      require_skill: false,
      daily_task_quota: null,
      monthly_cost_budget: null,
    };
    type Caller = 'own key' | 'admin key' | 'Console' | 'sibling key' | 'other admin key' | 'other Console';

    //      field                      own   admin console sibling oAdmin oConsole
    const TABLE: Array<[Field, Record<Caller, [number, string?]>]> = [
      ['enabled', row([200], [200], [200])],
      ['allow_public_egress', row([200], [200], [200])],
      ['publicly_discoverable', row([403, 'setting_not_permitted'], [200], [200])],
      ['filter_mode', row([403, 'setting_not_permitted'], [200], [200])],
      ['require_skill', row([403, 'setting_not_permitted'], [200], [200])],
      ['daily_task_quota', row([403, 'setting_not_permitted'], [200], [200])],
      ['monthly_cost_budget', row([403, 'setting_not_permitted'], [200], [200])],
    ];
    function row(
      own: [number, string?],
      admin: [number, string?],
      consoleUser: [number, string?],
    ): Record<Caller, [number, string?]> {
      return {
        'own key': own,
        'admin key': admin,
        Console: consoleUser,
        'sibling key': [403, 'identity_not_own'],
        'other admin key': [404, 'identity_not_found'],
        'other Console': [404, 'identity_not_found'],
      };
    }

    async function caller(kind: Caller, ownKey: string): Promise<AuthHeaders> {
      switch (kind) {
        case 'own key':
          return apiKey(ownKey);
        case 'admin key':
          return acmeAdmin;
        case 'Console':
          return bearer(acme);
        case 'sibling key':
          return apiKey((await createIdentity(t, bearer(acme), { mint_key: true })).api_key!.key);
        case 'other admin key':
          return apiKey(await mintAdminKey(t, other));
        case 'other Console':
          return bearer(other);
      }
    }

    describe.each(TABLE)('%s', (field, expectations) => {
      it.each(Object.entries(expectations) as Array<[Caller, [number, string?]]>)(
        '%s → %j',
        async (kind, [status, code]) => {
          const identity = await createIdentity(t, bearer(acme), { mint_key: true });
          const res = await t
            .http()
            .patch(`/api/v1/identities/${identity.agent_handle}/settings`)
            .set(await caller(kind, identity.api_key!.key))
            .send({ [field]: VALUES[field] })
            .expect(status);
          const after = await t
            .http()
            .get(`/api/v1/identities/${identity.agent_handle}/settings`)
            .set(bearer(acme))
            .expect(200);
          if (status === 200) {
            expect(res.body).toEqual({ ...DEFAULTS, [field]: VALUES[field] });
            expect(after.body).toEqual(res.body);
          } else {
            expect(res.body.code).toBe(code);
            expect(after.body).toEqual(DEFAULTS);
          }
        },
      );
    });

    it('a change with one forbidden field is refused whole', async () => {
      const identity = await createIdentity(t, bearer(acme), { mint_key: true });
      await t
        .http()
        .patch(`/api/v1/identities/${identity.agent_handle}/settings`)
        .set(apiKey(identity.api_key!.key))
        .send({ enabled: true, filter_mode: 'blacklist' })
        .expect(403);
      const after = await t
        .http()
        .get(`/api/v1/identities/${identity.agent_handle}/settings`)
        .set(bearer(acme))
        .expect(200);
      expect(after.body).toEqual(DEFAULTS);
    });

    it('reading settings: own key, admin key, Console yes; sibling 403; other organization 404', async () => {
      const identity = await createIdentity(t, bearer(acme), { mint_key: true });
      const path = `/api/v1/identities/${identity.agent_handle}/settings`;
      for (const kind of ['own key', 'admin key', 'Console'] as const) {
        expect(
          (
            await t
              .http()
              .get(path)
              .set(await caller(kind, identity.api_key!.key))
              .expect(200)
          ).body,
        ).toEqual(DEFAULTS);
      }
      await t
        .http()
        .get(path)
        .set(await caller('sibling key', ''))
        .expect(403);
      await t
        .http()
        .get(path)
        .set(await caller('other admin key', ''))
        .expect(404);
      await t
        .http()
        .get(path)
        .set(await caller('other Console', ''))
        .expect(404);
    });

    it('an unclaimed identity cannot be enabled (403), nor read or change its settings', async () => {
      const orphan = await agentSignup(t);
      const path = `/api/v1/identities/${orphan.handle}/settings`;
      for (const body of [{ enabled: true }, { allow_public_egress: true }]) {
        const res = await t.http().patch(path).set(apiKey(orphan.key)).send(body).expect(403);
        expect(res.body.code).toBe('identity_unclaimed');
      }
      expect((await t.http().get(path).set(apiKey(orphan.key)).expect(403)).body.code).toBe('identity_unclaimed');
      const [row] = await t.db.query(`SELECT enabled, allow_public_egress FROM identities WHERE id = $1`, [orphan.id]);
      expect(row).toEqual({ enabled: false, allow_public_egress: false });
    });
  });

  describe('delete', () => {
    it('revokes the keys, 404s the card, keeps the row readable and the handle reserved forever', async () => {
      const own = await createEnabledIdentity(t, acme);
      const second = (
        await t.http().post('/api/v1/api-keys').set(acmeAdmin).send({ scoped_identity_id: own.id }).expect(201)
      ).body.key;
      await t.http().get(`/a2a/${own.handle}/card`).expect(200);

      await t.http().delete(`/api/v1/identities/${own.handle}`).set(acmeAdmin).expect(204);

      for (const key of [own.key, second]) {
        await t.http().get('/api-keys/self').set(apiKey(key)).expect(401);
      }
      await t.http().get(`/a2a/${own.handle}/card`).expect(404);
      const read = await t.http().get(`/api/v1/identities/${own.handle}`).set(bearer(acme)).expect(200);
      expect(read.body).toMatchObject({ status: 'deleted', enabled: false });

      for (const auth of [bearer(acme), bearer(other)]) {
        const again = await t
          .http()
          .post('/api/v1/identities')
          .set(auth)
          .send({ agent_handle: own.handle })
          .expect(409);
        expect(again.body.code).toBe('handle_taken');
      }
      await t.http().post('/api/v1/agent-signup').send({ agent_handle: own.handle }).expect(409);
    });

    it('a deleted identity can no longer change', async () => {
      const { agent_handle: handle } = await createIdentity(t, bearer(acme));
      await t.http().delete(`/api/v1/identities/${handle}`).set(bearer(acme)).expect(204);
      const attempts = [
        t.http().patch(`/api/v1/identities/${handle}`).set(bearer(acme)).send({ description: 'back' }),
        t.http().patch(`/api/v1/identities/${handle}/settings`).set(bearer(acme)).send({ enabled: true }),
        t.http().delete(`/api/v1/identities/${handle}`).set(bearer(acme)),
      ];
      for (const res of await Promise.all(attempts)) {
        expect({ status: res.status, code: res.body.code }).toEqual({ status: 409, code: 'identity_deleted' });
      }
      await t
        .http()
        .post('/api/v1/api-keys')
        .set(bearer(acme))
        .send({
          scope: 'agent',
          scoped_identity_id: (await t.http().get(`/api/v1/identities/${handle}`).set(bearer(acme))).body.id,
        })
        .expect(404);
    });
  });

  describe('bad input → 400 with field errors, never a 500', () => {
    const create = (body: unknown) =>
      t
        .http()
        .post('/api/v1/identities')
        .set(bearer(acme))
        .send(body as object);

    it.each([
      ['too short', 'ab'],
      ['too long', 'x'.repeat(64)],
      ['upper case', 'Acme-Billing'],
      ['leading hyphen', '-acme'],
      ['trailing hyphen', 'acme-'],
      ['underscore', 'acme_billing'],
      ['dot', 'acme.billing'],
      ['space', 'acme billing'],
      ['non-ASCII', 'acmé'],
      ['a number', 12345],
      ['null', null],
      ['missing', undefined],
    ])('invalid handle (%s)', async (_, handle) => {
      const res = await create({ agent_handle: handle }).expect(400);
      expect(res.body.code).toBe('validation_failed');
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain('agent_handle');
    });

    it.each(['directory', 'api', 'console', 'well-known', 'claim', 'agent-signup', 'a2a'])(
      'reserved handle %s',
      async (handle) => {
        const res = await create({ agent_handle: handle }).expect(400);
        expect(res.body.errors).toEqual([{ field: 'agent_handle', message: `agent_handle "${handle}" is reserved` }]);
        await t.http().post('/api/v1/agent-signup').send({ agent_handle: handle }).expect(400);
      },
    );

    it('duplicate handle → 409, whoever holds it', async () => {
      const handle = unique('dup');
      await create({ agent_handle: handle }).expect(201);
      expect((await create({ agent_handle: handle }).expect(409)).body.code).toBe('handle_taken');
      await t.http().post('/api/v1/identities').set(bearer(other)).send({ agent_handle: handle }).expect(409);
      const orphan = await agentSignup(t);
      await create({ agent_handle: orphan.handle }).expect(409);
    });

    it('concurrent creates of one handle: one 201, the rest 409', async () => {
      const handle = unique('race');
      const results = await Promise.all(Array.from({ length: 6 }, () => create({ agent_handle: handle })));
      expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
    });

    it.each([
      ['display_name', { display_name: 'x'.repeat(101) }],
      ['description', { description: 'x'.repeat(2001) }],
      ['skills', { skills: Array.from({ length: 51 }, (_, i) => skill(`s${i}`)) }],
      ['skills[0].tags', { skills: [skill('a', { tags: Array.from({ length: 21 }, (_, i) => `t${i}`) })] }],
      ['skills[0].tags', { skills: [skill('a', { tags: ['x'.repeat(51)] })] }],
      ['skills[0].name', { skills: [skill('a', { name: 'x'.repeat(101) })] }],
      ['skills[0].id', { skills: [skill('x'.repeat(101))] }],
      ['skills[0].description', { skills: [skill('a', { description: 'x'.repeat(1001) })] }],
      ['skills[0].examples', { skills: [skill('a', { examples: Array.from({ length: 11 }, () => 'e') })] }],
      ['skills[0].examples', { skills: [skill('a', { examples: ['x'.repeat(501)] })] }],
    ])('oversize %s', async (field, body) => {
      const res = await create({ agent_handle: unique('big'), ...body }).expect(400);
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    });

    it.each([
      ['foo', { foo: 1 }],
      ['enabled', { enabled: true }],
      ['organization_id', { organization_id: '00000000-0000-4000-8000-000000000000' }],
      ['skills[0].secret', { skills: [skill('a', { secret: 'x' })] }],
    ])('unknown field %s', async (field, body) => {
      const res = await create({ agent_handle: unique('unknown'), ...body }).expect(400);
      expect(res.body.errors).toContainEqual({ field, message: `${field} is not a known field` });
    });

    it.each([
      ['not an array', { skills: 'billing' }, 'skills'],
      ['an object', { skills: { id: 'a' } }, 'skills'],
      ['a null skill', { skills: [null] }, 'skills[0]'],
      ['a string skill', { skills: ['billing'] }, 'skills[0]'],
      ['an empty skill', { skills: [{}] }, 'skills[0].id'],
      ['tags not a list', { skills: [skill('a', { tags: 'finance' })] }, 'skills[0].tags'],
      ['a numeric tag', { skills: [skill('a', { tags: [7] })] }, 'skills[0].tags'],
      ['no tags', { skills: [{ id: 'a', name: 'A', description: 'd' }] }, 'skills[0].tags'],
      ['an empty name', { skills: [skill('a', { name: '' })] }, 'skills[0].name'],
      ['duplicate ids', { skills: [skill('a'), skill('a')] }, 'skills'],
      ['null display_name', { display_name: null }, 'display_name'],
      ['a bad filter_mode', { filter_mode: 'open' }, 'filter_mode'],
      ['a string boolean', { publicly_discoverable: 'yes' }, 'publicly_discoverable'],
    ])('malformed: %s', async (_, body, field) => {
      const res = await create({ agent_handle: unique('bad'), ...body }).expect(400);
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    });

    it('the same rules on card edit, settings and signup', async () => {
      const own = await createEnabledIdentity(t, acme);
      const card = (body: object) =>
        t.http().patch(`/api/v1/identities/${own.handle}`).set(apiKey(own.key)).send(body).expect(400);
      const settings = (body: object) =>
        t.http().patch(`/api/v1/identities/${own.handle}/settings`).set(bearer(acme)).send(body).expect(400);
      expect((await card({ agent_handle: 'renamed' })).body.errors).toContainEqual({
        field: 'agent_handle',
        message: 'agent_handle is not a known field',
      });
      await card({ skills: [{ id: 'a' }] });
      await card({ description: null });
      expect((await settings({ status: 'deleted' })).body.errors).toContainEqual({
        field: 'status',
        message: 'status is not a known field',
      });
      await settings({ enabled: 'true' });
      await settings({ enabled: null });
      await settings({ filter_mode: 'everyone' });
      await t
        .http()
        .post('/api/v1/agent-signup')
        .send({ agent_handle: unique('s'), publicly_discoverable: true })
        .expect(400);
      await t
        .http()
        .post('/api/v1/agent-signup')
        .send({ agent_handle: unique('s'), skills: [{}] })
        .expect(400);
      await t.http().post('/api/v1/identities/claim').set(bearer(acme)).send({ claim_code: 42 }).expect(400);
      await t.http().post('/api/v1/identities/claim').set(bearer(acme)).send({}).expect(400);
    });
  });
});
