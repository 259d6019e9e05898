import { startApp, type TestApp } from '../support/app';
import {
  agentSignup,
  apiKey,
  bearer,
  createIdentity,
  insertIdentity,
  signup,
  type ConsoleAccount,
  type IdentityFixture,
} from '../support/fixtures';
import { startReceiver, subscribe as subscribeAt, type Receiver } from '../support/receiver';

/**
 * The events other modules emit, each in the transaction of its change, as a
 * subscriber receives them: signed, with the resource as the REST API shows it.
 */
describe('events emitted by the other modules', () => {
  let t: TestApp;
  let receiver: Receiver;

  beforeAll(async () => {
    t = await startApp({ WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true', EVENTS_POLL_INTERVAL_MS: '50' });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  const subscribe = (org: ConsoleAccount, body: { events: string[]; identity?: string }) =>
    subscribeAt(t, receiver, bearer(org), body);
  const settle = () => new Promise((resolve) => setTimeout(resolve, 300));

  describe('contact rules', () => {
    let acme: ConsoleAccount;
    let owner: IdentityFixture;
    let other: IdentityFixture;
    let peer: IdentityFixture;

    beforeAll(async () => {
      acme = await signup(t, 'Acme');
      const globex = await signup(t, 'Globex');
      owner = await insertIdentity(t, { organizationId: acme.organizationId });
      other = await insertIdentity(t, { organizationId: acme.organizationId });
      peer = await insertIdentity(t, { organizationId: globex.organizationId });
    });

    it('created, updated (only when something changed) and deleted, with the rule as the API shows it', async () => {
      const all = await subscribe(acme, {
        events: ['contact_rule.created', 'contact_rule.updated', 'contact_rule.deleted'],
      });
      const ownerOnly = await subscribe(acme, { events: ['*'], identity: owner.handle });
      const otherOnly = await subscribe(acme, { events: ['*'], identity: other.handle });

      const created = await t
        .http()
        .post('/api/v1/contact-rules')
        .set(bearer(acme))
        .send({
          identity: owner.handle,
          direction: 'inbound',
          action: 'allow',
          peer: { type: 'identity', handle: peer.handle },
          note: 'partner',
        })
        .expect(201);
      const updated = await t
        .http()
        .patch(`/api/v1/contact-rules/${created.body.id}`)
        .set(bearer(acme))
        .send({ action: 'block' })
        .expect(200);
      await t
        .http()
        .patch(`/api/v1/contact-rules/${created.body.id}`)
        .set(bearer(acme))
        .send({ action: 'block' })
        .expect(200); // no change
      await t.http().delete(`/api/v1/contact-rules/${created.body.id}`).set(bearer(acme)).expect(204);
      // A change that fails emits nothing.
      await t
        .http()
        .patch(`/api/v1/contact-rules/${created.body.id}`)
        .set(bearer(acme))
        .send({ action: 'allow' })
        .expect(404);

      const events = await all.take(3);
      expect(events.map((e) => [e.type, e.organization_id])).toEqual([
        ['contact_rule.created', acme.organizationId],
        ['contact_rule.updated', acme.organizationId],
        ['contact_rule.deleted', acme.organizationId],
      ]);
      expect(events[0].data).toEqual({ rule: created.body });
      expect(events[1].data).toEqual({ rule: updated.body });
      expect(events[2].data).toEqual({ rule: updated.body });
      expect((await ownerOnly.take(3)).map((e) => e.type)).toEqual([
        'contact_rule.created',
        'contact_rule.updated',
        'contact_rule.deleted',
      ]);
      await settle();
      expect(all.requests().length).toBe(3);
      expect(otherOnly.requests().length).toBe(0);
    });
  });

  describe('identities', () => {
    it('identity.claimed when created claimed (with a minted key: then api_key.created)', async () => {
      const acme = await signup(t);
      const all = await subscribe(acme, { events: ['*'] });
      const created = await createIdentity(t, bearer(acme), { display_name: 'Billing', mint_key: true });
      // One transaction: the two events may come in either order.
      const events = await all.take(2);
      const claimed = events.find((e) => e.type === 'identity.claimed')!;
      const keyCreated = events.find((e) => e.type === 'api_key.created')!;
      const { api_key: minted, ...identity } = created;
      expect(claimed).toMatchObject({
        type: 'identity.claimed',
        organization_id: acme.organizationId,
        data: { identity },
      });
      expect(keyCreated).toMatchObject({
        type: 'api_key.created',
        data: { api_key: { id: minted!.id, scoped_identity_id: created.id } },
      });
      expect(JSON.stringify(keyCreated)).not.toContain(minted!.key.slice(12));
    });

    it('agent signup emits nothing (no organization yet); the claim emits identity.claimed to the claiming organization', async () => {
      const acme = await signup(t);
      const all = await subscribe(acme, { events: ['*'] });
      const signedUp = await agentSignup(t, { display_name: 'Scout' });
      const [{ count }] = await t.db.query(
        `SELECT count(*)::int AS count FROM events WHERE $1 = ANY(identity_ids) OR data::text LIKE $2`,
        [signedUp.id, `%${signedUp.id}%`],
      );
      expect(count).toBe(0);
      const claimed = await t
        .http()
        .post('/api/v1/identities/claim')
        .set(bearer(acme))
        .send({ claim_code: signedUp.claimCode })
        .expect(200);
      const [event] = await all.take(1);
      expect(event).toMatchObject({
        type: 'identity.claimed',
        organization_id: acme.organizationId,
        data: { identity: claimed.body },
      });
      expect(JSON.stringify(event)).not.toContain(signedUp.claimCode);
    });

    it('identity.updated on a real card or settings change and on deletion, to org-wide and identity-scoped webhooks', async () => {
      const acme = await signup(t);
      const created = await createIdentity(t, bearer(acme), { mint_key: true });
      const handle = created.agent_handle;
      const all = await subscribe(acme, { events: ['identity.updated', 'api_key.revoked'] });
      const scoped = await subscribe(acme, { events: ['*'], identity: handle });
      const ownKey = apiKey(created.api_key!.key);

      const card = await t
        .http()
        .patch(`/api/v1/identities/${handle}`)
        .set(ownKey)
        .send({ description: 'Invoices, on request.' })
        .expect(200);
      await t
        .http()
        .patch(`/api/v1/identities/${handle}`)
        .set(ownKey)
        .send({ description: 'Invoices, on request.' })
        .expect(200); // no change
      await t
        .http()
        .patch(`/api/v1/identities/${handle}/settings`)
        .set(bearer(acme))
        .send({ enabled: true })
        .expect(200);
      await t
        .http()
        .patch(`/api/v1/identities/${handle}/settings`)
        .set(bearer(acme))
        .send({ enabled: true })
        .expect(200); // no change
      await t
        .http()
        .patch(`/api/v1/identities/${handle}/settings`)
        .set(ownKey)
        .send({ filter_mode: 'blacklist' })
        .expect(403); // refused
      await t.http().delete(`/api/v1/identities/${handle}`).set(bearer(acme)).expect(204);
      const read = await t.http().get(`/api/v1/identities/${handle}`).set(bearer(acme)).expect(200);

      const events = await all.take(4);
      const updates = events.filter((e) => e.type === 'identity.updated');
      expect(updates).toHaveLength(3);
      expect(updates[0].data).toEqual({ identity: card.body });
      expect(updates[1].data.identity).toMatchObject({ enabled: true, status: 'active' });
      expect(updates[2].data).toEqual({ identity: read.body });
      expect(updates[2].data.identity).toMatchObject({ status: 'deleted', enabled: false });
      expect(events.filter((e) => e.type === 'api_key.revoked').map((e) => e.data.api_key)).toEqual([
        expect.objectContaining({ id: created.api_key!.id, status: 'revoked' }),
      ]);
      // The identity's own webhook: its identity events, not the organization's key events.
      expect((await scoped.take(3)).map((e) => e.type)).toEqual([
        'identity.updated',
        'identity.updated',
        'identity.updated',
      ]);
      await settle();
      expect(all.requests().length).toBe(4);
      expect(scoped.requests().length).toBe(3);
    });
  });
});
