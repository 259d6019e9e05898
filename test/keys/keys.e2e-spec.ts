import { startApp, type TestApp } from '../support/app';
import { statementsFor } from '../support/statements';
import {
  apiKey,
  bearer,
  insertIdentity,
  mintAdminKey,
  mintKeyDirectly,
  signup,
  type ConsoleAccount,
  type IdentityFixture,
} from '../support/fixtures';

describe('API key lifecycle', () => {
  let t: TestApp;
  let acme: ConsoleAccount;
  let other: ConsoleAccount;
  let billing: IdentityFixture;

  beforeAll(async () => {
    t = await startApp();
    acme = await signup(t, 'Acme');
    other = await signup(t, 'Other');
    billing = await insertIdentity(t, { organizationId: acme.organizationId });
  });
  afterAll(() => t.close());

  describe('who may mint (docs/api.md §2)', () => {
    it('Console mints an admin key; the plaintext is returned once with the metadata', async () => {
      const res = await t
        .http()
        .post('/api/v1/api-keys')
        .set(bearer(acme))
        .send({ scope: 'admin', label: 'ci' })
        .expect(201);
      expect(res.body.key).toMatch(/^a2a_adm_[0-9A-Za-z]{38}$/);
      expect(res.body).toMatchObject({
        scope: 'admin',
        scoped_identity_id: null,
        organization_id: acme.organizationId,
        label: 'ci',
        status: 'active',
        prefix: res.body.key.slice(0, 12),
        created_by: { type: 'console_user', id: acme.userId },
        last_used_at: null,
        revoked_at: null,
      });
      expect(res.body).not.toHaveProperty('key_hash');
    });

    it('Console mints an agent key bound to an identity of its organization', async () => {
      const res = await t
        .http()
        .post('/api/v1/api-keys')
        .set(bearer(acme))
        .send({ scope: 'agent', scoped_identity_id: billing.id })
        .expect(201);
      expect(res.body.key).toMatch(/^a2a_agt_/);
      expect(res.body).toMatchObject({
        scope: 'agent',
        scoped_identity_id: billing.id,
        organization_id: acme.organizationId,
      });
    });

    it('an admin key mints agent keys; omitted scope means agent', async () => {
      const admin = await mintAdminKey(t, acme);
      const res = await t
        .http()
        .post('/api/v1/api-keys')
        .set(apiKey(admin))
        .send({ scoped_identity_id: billing.id })
        .expect(201);
      expect(res.body).toMatchObject({ scope: 'agent', scoped_identity_id: billing.id });
      const self = await t.http().get('/api-keys/self').set(apiKey(admin)).expect(200);
      expect(res.body.created_by).toEqual({ type: 'api_key', id: self.body.id });
    });

    it('an admin key cannot mint an admin key', async () => {
      const admin = await mintAdminKey(t, acme);
      const res = await t.http().post('/api/v1/api-keys').set(apiKey(admin)).send({ scope: 'admin' }).expect(403);
      expect(res.body.code).toBe('admin_mint_forbidden');
    });

    it('an agent key cannot mint any key', async () => {
      const agent = await mintKeyDirectly(t, billing.id);
      for (const body of [{ scope: 'agent', scoped_identity_id: billing.id }, { scope: 'admin' }]) {
        const res = await t.http().post('/api/v1/api-keys').set(apiKey(agent)).send(body).expect(403);
        expect(res.body.code).toBe('agent_key_not_allowed');
      }
    });

    it('an agent key needs an identity, an admin key must not name one', async () => {
      const admin = await mintAdminKey(t, acme);
      const missing = await t.http().post('/api/v1/api-keys').set(apiKey(admin)).send({ scope: 'agent' }).expect(400);
      expect(missing.body.errors).toEqual([{ field: 'scoped_identity_id', message: expect.any(String) }]);
      await t
        .http()
        .post('/api/v1/api-keys')
        .set(bearer(acme))
        .send({ scope: 'admin', scoped_identity_id: billing.id })
        .expect(400);
      await t.http().post('/api/v1/api-keys').set(bearer(acme)).send({ scope: 'root' }).expect(400);
    });

    it("cannot bind a key to another organization's identity, an unclaimed or a deleted identity", async () => {
      const foreign = await insertIdentity(t, { organizationId: other.organizationId });
      const unclaimed = await insertIdentity(t, { organizationId: null });
      const deleted = await insertIdentity(t, { organizationId: acme.organizationId });
      await t.db.query(`UPDATE identities SET status = 'deleted', deleted_at = now() WHERE id = $1`, [deleted.id]);
      for (const id of [foreign.id, unclaimed.id, deleted.id, '00000000-0000-4000-8000-000000000000']) {
        const res = await t
          .http()
          .post('/api/v1/api-keys')
          .set(bearer(acme))
          .send({ scope: 'agent', scoped_identity_id: id })
          .expect(404);
        expect(res.body.code).toBe('identity_not_found');
      }
    });

    it('refuses more than 20 active keys per identity', async () => {
      const crowded = await insertIdentity(t, { organizationId: acme.organizationId });
      const admin = await mintAdminKey(t, acme);
      for (let i = 0; i < 20; i++) {
        await t.http().post('/api/v1/api-keys').set(apiKey(admin)).send({ scoped_identity_id: crowded.id }).expect(201);
      }
      const res = await t
        .http()
        .post('/api/v1/api-keys')
        .set(apiKey(admin))
        .send({ scoped_identity_id: crowded.id })
        .expect(409);
      expect(res.body.code).toBe('key_limit_reached');
    });
  });

  describe('the plaintext is shown once', () => {
    it('never appears in reads, lists or self', async () => {
      const minted = await t.http().post('/api/v1/api-keys').set(bearer(acme)).send({ scope: 'admin' }).expect(201);
      const key: string = minted.body.key;
      const reads = [
        await t.http().get(`/api/v1/api-keys/${minted.body.id}`).set(bearer(acme)).expect(200),
        await t.http().get('/api/v1/api-keys').set(bearer(acme)).expect(200),
        await t.http().get('/api-keys/self').set(apiKey(key)).expect(200),
      ];
      for (const res of reads) {
        expect(JSON.stringify(res.body)).not.toContain(key.slice(12));
        expect(JSON.stringify(res.body)).not.toContain('"key"');
      }
      const stored = await t.db.query(`SELECT * FROM api_keys WHERE id = $1`, [minted.body.id]);
      expect(JSON.stringify(stored)).not.toContain(key);
    });
  });

  describe('malformed keys', () => {
    it('a key whose checksum is wrong gets 401 without any database lookup (docs/api.md §2)', async () => {
      const key = await mintAdminKey(t, acme);
      const tampered = key.slice(0, -1) + (key.endsWith('a') ? 'b' : 'a');
      // Statements issued on behalf of this request; background work runs outside it.
      const stop = statementsFor(t, tampered);
      let statements: string[];
      try {
        const res = await t.http().get('/api-keys/self').set(apiKey(tampered)).expect(401);
        expect(res.body.code).toBe('invalid_api_key');
      } finally {
        statements = stop();
      }
      expect(statements).toEqual([]);
    });
  });

  describe('self', () => {
    it('reads the calling key, any scope, with scoped_identity_id', async () => {
      const admin = await mintAdminKey(t, acme);
      const adminSelf = await t.http().get('/api-keys/self').set(apiKey(admin)).expect(200);
      expect(adminSelf.body).toMatchObject({
        scope: 'admin',
        scoped_identity_id: null,
        organization_id: acme.organizationId,
      });

      const unclaimed = await insertIdentity(t, { organizationId: null });
      const agent = await mintKeyDirectly(t, unclaimed.id);
      const agentSelf = await t.http().get('/api-keys/self').set(apiKey(agent)).expect(200);
      expect(agentSelf.body).toMatchObject({ scope: 'agent', scoped_identity_id: unclaimed.id, organization_id: null });
    });

    it("is answered from authentication's own read of the key: no second statement", async () => {
      const admin = await mintAdminKey(t, acme);
      const stop = statementsFor(t, admin);
      let statements: string[];
      try {
        await t.http().get('/api-keys/self').set(apiKey(admin)).expect(200);
      } finally {
        statements = stop();
      }
      expect(statements).toEqual(['verify_api_keys']);
    });

    it('records last_used_at without a write per request', async () => {
      const admin = await mintAdminKey(t, acme);
      const before = Date.now();
      const first = await t.http().get('/api-keys/self').set(apiKey(admin)).expect(200);
      expect(Date.parse(first.body.last_used_at)).toBeGreaterThanOrEqual(before - 5);
      // The flush interval is 50 ms in tests; the stamp reaches the table soon after.
      await new Promise((resolve) => setTimeout(resolve, 200));
      const [row] = await t.db.query(`SELECT last_used_at FROM api_keys WHERE id = $1`, [first.body.id]);
      expect(row.last_used_at).not.toBeNull();
    });

    it('revokes itself permanently: 200 with status revoked, then 401 on the very next request', async () => {
      const admin = await mintAdminKey(t, acme);
      const res = await t.http().post('/api-keys/self/revoke').set(apiKey(admin)).expect(200);
      expect(res.body).toMatchObject({ status: 'revoked', revoked_at: expect.any(String) });
      const after = await t.http().get('/api-keys/self').set(apiKey(admin)).expect(401);
      expect(after.body.code).toBe('invalid_api_key');
      await t.http().post('/api-keys/self/revoke').set(apiKey(admin)).expect(401);
    });

    it('revocation holds on the very next request on every instance, under concurrent load (lookups are batched, never cached)', async () => {
      const second = await startApp({}, t);
      try {
        const admin = await mintAdminKey(t, acme);
        // Keep both instances busy with this key, so lookups are always in flight when the revocation lands.
        let running = true;
        const statuses = new Set<number>();
        const hammer = async (app: TestApp) => {
          while (running) {
            statuses.add((await app.http().get('/api-keys/self').set(apiKey(admin))).status);
          }
        };
        const load = [t, second, t, second, t, second].map(hammer);
        await new Promise((resolve) => setTimeout(resolve, 200));
        await second.http().post('/api-keys/self/revoke').set(apiKey(admin)).expect(200);
        const next = await Promise.all(
          [t, second].flatMap((app) => [1, 2, 3, 4].map(() => app.http().get('/api-keys/self').set(apiKey(admin)))),
        );
        running = false;
        await Promise.all(load);
        expect(next.map((res) => res.status)).toEqual(Array(8).fill(401));
        expect([...statuses].sort()).toEqual([200, 401]);
      } finally {
        await second.close();
      }
    });

    it("an unclaimed identity's key may revoke itself", async () => {
      const unclaimed = await insertIdentity(t, { organizationId: null });
      const agent = await mintKeyDirectly(t, unclaimed.id);
      await t.http().post('/api-keys/self/revoke').set(apiKey(agent)).expect(200);
      await t.http().get('/api-keys/self').set(apiKey(agent)).expect(401);
    });
  });

  describe('rotation', () => {
    it('mint a new key, then revoke the old one; only the new one works', async () => {
      const old = await mintAdminKey(t, acme);
      const agentOld = (
        await t.http().post('/api/v1/api-keys').set(apiKey(old)).send({ scoped_identity_id: billing.id }).expect(201)
      ).body.key;
      const agentNew = (
        await t.http().post('/api/v1/api-keys').set(apiKey(old)).send({ scoped_identity_id: billing.id }).expect(201)
      ).body.key;
      await t.http().post('/api-keys/self/revoke').set(apiKey(agentOld)).expect(200);
      await t.http().get('/api-keys/self').set(apiKey(agentOld)).expect(401);
      await t.http().get('/api-keys/self').set(apiKey(agentNew)).expect(200);
    });
  });

  describe('immutable fields', () => {
    it.each([
      [{ status: 'active' }, 'status'],
      [{ scope: 'admin' }, 'scope'],
      [{ scoped_identity_id: '00000000-0000-4000-8000-000000000000' }, 'scoped_identity_id'],
      [{ label: 'ok', id: 'x' }, 'id'],
    ])('PATCH with %j → 400 naming the field', async (body, field) => {
      const minted = await t.http().post('/api/v1/api-keys').set(bearer(acme)).send({ scope: 'admin' }).expect(201);
      const res = await t.http().patch(`/api/v1/api-keys/${minted.body.id}`).set(bearer(acme)).send(body).expect(400);
      expect(res.body.code).toBe('validation_failed');
      expect(res.body.errors).toContainEqual({ field, message: `${field} is not a known field` });
      const after = await t.http().get(`/api/v1/api-keys/${minted.body.id}`).set(bearer(acme)).expect(200);
      expect(after.body).toMatchObject({ status: 'active', scope: 'admin', label: '' });
    });

    it('Console edits label and description; API keys may not', async () => {
      const admin = await mintAdminKey(t, acme);
      const id = (await t.http().get('/api-keys/self').set(apiKey(admin))).body.id;
      const res = await t
        .http()
        .patch(`/api/v1/api-keys/${id}`)
        .set(bearer(acme))
        .send({ label: 'deploy', description: 'CI' })
        .expect(200);
      expect(res.body).toMatchObject({ label: 'deploy', description: 'CI' });
      const denied = await t.http().patch(`/api/v1/api-keys/${id}`).set(apiKey(admin)).send({ label: 'x' }).expect(403);
      expect(denied.body.code).toBe('admin_key_not_allowed');
    });
  });

  describe('list, read and Console revoke', () => {
    it('pages with a cursor, newest first, filtered, only the own organization', async () => {
      const org = await signup(t, 'Lister');
      const identity = await insertIdentity(t, { organizationId: org.organizationId });
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        ids.push((await t.http().post('/api/v1/api-keys').set(bearer(org)).send({ scope: 'admin' })).body.id);
      }
      for (let i = 0; i < 2; i++) {
        ids.push(
          (
            await t
              .http()
              .post('/api/v1/api-keys')
              .set(bearer(org))
              .send({ scope: 'agent', scoped_identity_id: identity.id })
          ).body.id,
        );
      }

      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const res: { body: { api_keys: Array<{ id: string }>; next_cursor: string | null } } = await t
          .http()
          .get('/api/v1/api-keys')
          .query({ limit: 3, ...(cursor ? { cursor } : {}) })
          .set(bearer(org))
          .expect(200);
        expect(res.body.api_keys.length).toBeLessThanOrEqual(3);
        seen.push(...res.body.api_keys.map((k) => k.id));
        cursor = res.body.next_cursor;
      } while (cursor);
      // Every key exactly once, in the order of one unpaged read (newest first).
      const all = await t.http().get('/api/v1/api-keys').query({ limit: 200 }).set(bearer(org)).expect(200);
      expect(seen).toEqual(all.body.api_keys.map((k: { id: string }) => k.id));
      expect([...seen].sort()).toEqual([...ids].sort());
      const times = all.body.api_keys.map((k: { created_at: string }) => Date.parse(k.created_at));
      expect(times).toEqual([...times].sort((a, b) => b - a));

      const agents = await t.http().get('/api/v1/api-keys').query({ scope: 'agent' }).set(bearer(org)).expect(200);
      expect(agents.body.api_keys).toHaveLength(2);
      const byHandle = await t
        .http()
        .get('/api/v1/api-keys')
        .query({ identity: identity.handle })
        .set(bearer(org))
        .expect(200);
      expect(byHandle.body.api_keys).toHaveLength(2);

      await t.http().post(`/api/v1/api-keys/${ids[0]}/revoke`).set(bearer(org)).expect(200);
      const revoked = await t.http().get('/api/v1/api-keys').query({ status: 'revoked' }).set(bearer(org)).expect(200);
      expect(revoked.body.api_keys.map((k: { id: string }) => k.id)).toEqual([ids[0]]);

      // Another organization sees none of it.
      const foreign = await t.http().get('/api/v1/api-keys').set(bearer(acme)).expect(200);
      expect(foreign.body.api_keys.map((k: { id: string }) => k.id)).not.toEqual(expect.arrayContaining([ids[0]]));
      await t.http().get(`/api/v1/api-keys/${ids[1]}`).set(bearer(acme)).expect(404);
      await t.http().post(`/api/v1/api-keys/${ids[1]}/revoke`).set(bearer(acme)).expect(404);
    });

    it('a Console revocation takes effect on the next request', async () => {
      const admin = await mintAdminKey(t, acme);
      const id = (await t.http().get('/api-keys/self').set(apiKey(admin))).body.id;
      await t.http().post(`/api/v1/api-keys/${id}/revoke`).set(bearer(acme)).expect(200);
      await t.http().get('/api-keys/self').set(apiKey(admin)).expect(401);
    });

    it('rejects a bad cursor, limit or id with a clear 4xx', async () => {
      expect((await t.http().get('/api/v1/api-keys?cursor=nonsense').set(bearer(acme)).expect(400)).body.code).toBe(
        'invalid_cursor',
      );
      expect(
        (await t.http().get('/api/v1/api-keys?limit=201').set(bearer(acme)).expect(400)).body.errors[0].field,
      ).toBe('limit');
      expect((await t.http().get('/api/v1/api-keys?limit=abc').set(bearer(acme)).expect(400)).body.code).toBe(
        'validation_failed',
      );
      expect((await t.http().get('/api/v1/api-keys/not-a-uuid').set(bearer(acme)).expect(404)).body.code).toBe(
        'api_key_not_found',
      );
    });
  });
});
