import { startApp, type TestApp } from '../support/app';
import { bearer, insertIdentity, signup, type ConsoleAccount, type IdentityFixture } from '../support/fixtures';
import { startReceiver, verified, type Envelope, type ReceivedRequest, type Receiver } from '../support/receiver';

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

  /** A webhook on its own receiver path; `take(n)` waits for n events there and returns them verified. */
  async function subscribe(org: ConsoleAccount, body: { events: string[]; identity?: string }) {
    const url = `${receiver.url}/${Math.random().toString(36).slice(2)}`;
    const res = await t.http().post('/api/v1/webhooks').set(bearer(org)).send({ url, ...body }).expect(201);
    const secret: string = res.body.secret;
    const mine = (received: ReceivedRequest[]) => received.filter((r) => r.path === new URL(url).pathname);
    return {
      id: res.body.id as string,
      take: async (count: number): Promise<Envelope[]> => {
        const received = mine(await receiver.waitFor((all) => mine(all).length >= count));
        return received.map((r) => verified(secret, r));
      },
      count: () => mine(receiver.received).length,
    };
  }

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
      const all = await subscribe(acme, { events: ['contact_rule.created', 'contact_rule.updated', 'contact_rule.deleted'] });
      const ownerOnly = await subscribe(acme, { events: ['*'], identity: owner.handle });
      const otherOnly = await subscribe(acme, { events: ['*'], identity: other.handle });

      const created = await t.http().post('/api/v1/contact-rules').set(bearer(acme))
        .send({ identity: owner.handle, direction: 'inbound', action: 'allow', peer: { type: 'identity', handle: peer.handle }, note: 'partner' })
        .expect(201);
      const updated = await t.http().patch(`/api/v1/contact-rules/${created.body.id}`).set(bearer(acme)).send({ action: 'block' }).expect(200);
      await t.http().patch(`/api/v1/contact-rules/${created.body.id}`).set(bearer(acme)).send({ action: 'block' }).expect(200); // no change
      await t.http().delete(`/api/v1/contact-rules/${created.body.id}`).set(bearer(acme)).expect(204);
      // A change that fails emits nothing.
      await t.http().patch(`/api/v1/contact-rules/${created.body.id}`).set(bearer(acme)).send({ action: 'allow' }).expect(404);

      const events = await all.take(3);
      expect(events.map((e) => [e.type, e.organization_id])).toEqual([
        ['contact_rule.created', acme.organizationId], ['contact_rule.updated', acme.organizationId], ['contact_rule.deleted', acme.organizationId],
      ]);
      expect(events[0].data).toEqual({ rule: created.body });
      expect(events[1].data).toEqual({ rule: updated.body });
      expect(events[2].data).toEqual({ rule: updated.body });
      expect((await ownerOnly.take(3)).map((e) => e.type)).toEqual(['contact_rule.created', 'contact_rule.updated', 'contact_rule.deleted']);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(all.count()).toBe(3);
      expect(otherOnly.count()).toBe(0);
    });
  });
});
