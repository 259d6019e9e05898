import { startApp, type TestApp } from '../support/app';
import {
  apiKey,
  bearer,
  createEnabledIdentity,
  mintAdminKey,
  signup,
  type AuthHeaders,
  type ConsoleAccount,
} from '../support/fixtures';

/**
 * BOLA: no credential of one organization reads or changes another's identity
 * through any route, and the answer (404) does not even reveal that it exists.
 * A sibling identity's key in the same organization gets 403 (docs/api.md §9).
 */
describe('identity isolation between organizations', () => {
  let t: TestApp;
  let acme: ConsoleAccount;
  let other: ConsoleAccount;
  let target: { id: string; handle: string; key: string };
  let intruders: Array<[string, AuthHeaders]>;
  let sibling: AuthHeaders;

  beforeAll(async () => {
    t = await startApp();
    acme = await signup(t, 'Acme');
    other = await signup(t, 'Other');
    target = await createEnabledIdentity(t, acme, { description: 'Original.' });
    const foreign = await createEnabledIdentity(t, other);
    intruders = [
      ['other Console', bearer(other)],
      ['other admin key', apiKey(await mintAdminKey(t, other))],
      ["other organization's agent key", apiKey(foreign.key)],
    ];
    sibling = apiKey((await createEnabledIdentity(t, acme)).key);
  });
  afterAll(() => t.close());

  const snapshot = async () =>
    (
      await t.db.query(
        `SELECT display_name, description, skills, enabled, publicly_discoverable, allow_public_egress, filter_mode, status, card_version
       FROM identities WHERE id = $1`,
        [target.id],
      )
    )[0];

  const attempts = () => [
    { name: 'read', send: (auth: AuthHeaders) => t.http().get(`/api/v1/identities/${target.handle}`).set(auth) },
    {
      name: 'edit card',
      send: (auth: AuthHeaders) =>
        t.http().patch(`/api/v1/identities/${target.handle}`).set(auth).send({ description: 'Owned.' }),
    },
    {
      name: 'read settings',
      send: (auth: AuthHeaders) => t.http().get(`/api/v1/identities/${target.handle}/settings`).set(auth),
    },
    {
      name: 'disable',
      send: (auth: AuthHeaders) =>
        t.http().patch(`/api/v1/identities/${target.handle}/settings`).set(auth).send({ enabled: false }),
    },
    {
      name: 'allow egress',
      send: (auth: AuthHeaders) =>
        t.http().patch(`/api/v1/identities/${target.handle}/settings`).set(auth).send({ allow_public_egress: true }),
    },
    {
      name: 'list publicly',
      send: (auth: AuthHeaders) =>
        t.http().patch(`/api/v1/identities/${target.handle}/settings`).set(auth).send({ publicly_discoverable: true }),
    },
    {
      name: 'open filter',
      send: (auth: AuthHeaders) =>
        t.http().patch(`/api/v1/identities/${target.handle}/settings`).set(auth).send({ filter_mode: 'blacklist' }),
    },
    { name: 'delete', send: (auth: AuthHeaders) => t.http().delete(`/api/v1/identities/${target.handle}`).set(auth) },
  ];

  it("another organization's Console, admin key and agent keys get 404 on every route, and nothing changes", async () => {
    const before = await snapshot();
    for (const [who, auth] of intruders) {
      for (const attempt of attempts()) {
        const res = await attempt.send(auth);
        // Agent keys may not delete at all (the surface refuses them first).
        const expected = attempt.name === 'delete' && who.includes('agent key') ? 403 : 404;
        expect({ who, attempt: attempt.name, status: res.status }).toEqual({
          who,
          attempt: attempt.name,
          status: expected,
        });
        expect(JSON.stringify(res.body)).not.toContain(target.id);
      }
    }
    expect(await snapshot()).toEqual(before);
    await t.http().get('/api-keys/self').set(apiKey(target.key)).expect(200);
  });

  it("the answer for another organization's identity is the answer for no identity at all", async () => {
    for (const [, auth] of intruders.slice(0, 2)) {
      const real = await t.http().get(`/api/v1/identities/${target.handle}`).set(auth).expect(404);
      const none = await t.http().get('/api/v1/identities/no-such-identity').set(auth).expect(404);
      expect({ ...real.body, request_id: 'x' }).toEqual({ ...none.body, request_id: 'x' });
    }
  });

  it("a sibling identity's key gets 403 on every route and changes nothing", async () => {
    const before = await snapshot();
    for (const attempt of attempts()) {
      const res = await attempt.send(sibling);
      expect({ attempt: attempt.name, status: res.status }).toEqual({ attempt: attempt.name, status: 403 });
    }
    expect(await snapshot()).toEqual(before);
  });

  it("the organization directory shows only the caller's organization", async () => {
    for (const [, auth] of intruders) {
      const res = await t.http().get('/api/v1/identities/a2a/directory').query({ limit: 200 }).set(auth).expect(200);
      expect(res.body.identities.length).toBeGreaterThan(0);
      expect(
        res.body.identities.every((i: { organization_id: string }) => i.organization_id === other.organizationId),
      ).toBe(true);
      const searched = await t
        .http()
        .get('/api/v1/identities/a2a/directory')
        .query({ q: target.handle })
        .set(auth)
        .expect(200);
      // Ranked search may find the caller's own look-alike handles (trigram similarity), never the target.
      const found = searched.body.identities as { id: string; organization_id: string }[];
      expect(found.filter((i) => i.id === target.id || i.organization_id !== other.organizationId)).toEqual([]);
    }
  });

  it('another organization cannot mint a key for the identity', async () => {
    for (const [, auth] of intruders.slice(0, 2)) {
      await t
        .http()
        .post('/api/v1/api-keys')
        .set(auth)
        .send({ scope: 'agent', scoped_identity_id: target.id })
        .expect(404);
    }
  });
});
