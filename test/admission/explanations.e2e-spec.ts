import { AdmissionService } from '../../src/admission/admission.service';
import type { AdmissionDecisionView } from '../../src/admission/admission.view';
import { IdentitiesService } from '../../src/identities/identities.service';
import { startApp, type TestApp } from '../support/app';
import {
  apiKey,
  bearer,
  insertIdentity,
  mintAdminKey,
  signup,
  type ConsoleAccount,
  type IdentityFixture,
  type IdentityOptions,
} from '../support/fixtures';

/**
 * The administrators' view of admission: `POST /api/v1/admission/check` and the log of
 * denials. Each organization sees its own side in full and the other side's decision
 * only as `denied_by_peer`, never the other organization's rules.
 */
describe('admission explanations', () => {
  let t: TestApp;
  let acme: ConsoleAccount;
  let globex: ConsoleAccount;
  let initech: ConsoleAccount;

  beforeAll(async () => {
    t = await startApp();
    acme = await signup(t, 'Acme');
    globex = await signup(t, 'Globex');
    initech = await signup(t, 'Initech');
  });
  afterAll(() => t.close());

  const agent = (account: ConsoleAccount, settings: Omit<IdentityOptions, 'organizationId'> = {}) =>
    insertIdentity(t, { organizationId: account.organizationId, enabled: true, ...settings });

  async function rule(
    account: ConsoleAccount,
    owner: IdentityFixture,
    direction: string,
    action: string,
    peer: object,
  ): Promise<{ id: string }> {
    const res = await t
      .http()
      .post('/api/v1/contact-rules')
      .set(bearer(account))
      .send({ identity: owner.handle, direction, action, peer })
      .expect(201);
    return res.body;
  }

  const check = (auth: Record<string, string>, requester: IdentityFixture | string, worker: IdentityFixture | string) =>
    t
      .http()
      .post('/api/v1/admission/check')
      .set(auth)
      .send({
        requester: typeof requester === 'string' ? requester : requester.handle,
        worker: typeof worker === 'string' ? worker : worker.handle,
      });

  /** What the protocol endpoint does on every call. */
  async function call(requester: IdentityFixture, worker: IdentityFixture) {
    const identities = t.app.get(IdentitiesService);
    const [r, w] = await Promise.all([identities.findById(requester.id), identities.findById(worker.id)]);
    return t.app.get(AdmissionService).evaluate(r!, w!);
  }

  describe('check', () => {
    it("each side sees its own rule and the other side's block as denied_by_peer", async () => {
      const a = await agent(acme);
      const g = await agent(globex);
      const allow = await rule(acme, a, 'outbound', 'allow', { type: 'identity', handle: g.handle });
      const block = await rule(globex, g, 'both', 'block', {
        type: 'organization',
        organization_id: acme.organizationId,
      });

      const seenByAcme = await check(bearer(acme), a, g).expect(200);
      expect(seenByAcme.body).toEqual({
        allowed: false,
        skill: null,
        reason: 'denied_by_peer',
        approval_required_by: [],
        rules: [allow],
        own_stance: { requester: 'permits' },
      });
      expect(JSON.stringify(seenByAcme.body)).not.toContain(block.id);

      const seenByGlobex = await check(apiKey(await mintAdminKey(t, globex)), a, g).expect(200);
      expect(seenByGlobex.body).toEqual({
        allowed: false,
        skill: null,
        reason: 'blocked_by_worker',
        approval_required_by: [],
        rules: [block],
        own_stance: { worker: 'blocks' },
      });
      expect(JSON.stringify(seenByGlobex.body)).not.toContain(allow.id);
    });

    it("a mutual permit lists only the caller's own allow rule", async () => {
      const a = await agent(acme);
      const g = await agent(globex);
      const mine = await rule(acme, a, 'both', 'allow', {
        type: 'organization',
        organization_id: globex.organizationId,
      });
      const theirs = await rule(globex, g, 'inbound', 'allow', { type: 'identity', handle: a.handle });
      expect((await check(bearer(acme), a, g).expect(200)).body).toEqual({
        allowed: true,
        skill: null,
        reason: 'mutual_permit',
        approval_required_by: [],
        rules: [mine],
        own_stance: { requester: 'permits' },
      });
      expect((await check(bearer(globex), a, g).expect(200)).body).toEqual({
        allowed: true,
        skill: null,
        reason: 'mutual_permit',
        approval_required_by: [],
        rules: [theirs],
        own_stance: { worker: 'permits' },
      });
    });

    it("the caller's own side failing to permit is named; the other side's is denied_by_peer", async () => {
      const a = await agent(acme);
      const g = await agent(globex);
      expect((await check(bearer(acme), a, g).expect(200)).body).toEqual({
        allowed: false,
        skill: null,
        reason: 'not_permitted_by_requester',
        approval_required_by: [],
        rules: [],
        own_stance: { requester: 'refuses' },
      });
      expect((await check(bearer(globex), a, g).expect(200)).body).toEqual({
        allowed: false,
        skill: null,
        reason: 'denied_by_peer',
        approval_required_by: [],
        rules: [],
        own_stance: { worker: 'refuses' },
      });
      await rule(acme, a, 'outbound', 'allow', { type: 'identity', handle: g.handle });
      expect((await check(bearer(acme), a, g).expect(200)).body).toMatchObject({
        reason: 'denied_by_peer',
        own_stance: { requester: 'permits' },
      });
      expect((await check(bearer(globex), a, g).expect(200)).body.reason).toBe('not_permitted_by_worker');
    });

    it('same organization and public egress need no rules', async () => {
      const a = await agent(acme, { allowPublicEgress: true });
      const b = await agent(acme);
      const g = await agent(globex, { publiclyDiscoverable: true });
      expect((await check(bearer(acme), a, b).expect(200)).body).toEqual({
        allowed: true,
        skill: null,
        reason: 'same_organization',
        approval_required_by: [],
        rules: [],
        own_stance: {},
      });
      expect((await check(bearer(acme), a, g).expect(200)).body).toEqual({
        allowed: true,
        skill: null,
        reason: 'public_egress',
        approval_required_by: [],
        rules: [],
        own_stance: { requester: 'refuses' },
      });
    });

    it("within one organization both sides' rules are shown", async () => {
      const a = await agent(acme);
      const b = await agent(acme);
      const out = await rule(acme, a, 'outbound', 'allow', { type: 'identity', handle: b.handle });
      const block = await rule(acme, b, 'inbound', 'block', { type: 'identity', handle: a.handle });
      expect((await check(bearer(acme), a, b).expect(200)).body).toEqual({
        allowed: false,
        skill: null,
        reason: 'blocked_by_worker',
        approval_required_by: [],
        rules: [out, block],
        own_stance: {},
      });
    });

    it("reports the participants' state", async () => {
      const a = await agent(acme);
      const disabled = await insertIdentity(t, { organizationId: acme.organizationId, enabled: false });
      const unclaimed = await insertIdentity(t, { organizationId: null });
      expect((await check(bearer(acme), disabled, a).expect(200)).body.reason).toBe('requester_disabled');
      expect((await check(bearer(acme), a, disabled).expect(200)).body.reason).toBe('worker_unavailable');
      // An unclaimed identity belongs to no organization, so its state hides no one's rules.
      expect((await check(bearer(acme), a, unclaimed).expect(200)).body.reason).toBe('worker_unavailable');
      expect((await check(bearer(acme), unclaimed, a).expect(200)).body.reason).toBe('requester_unclaimed');
      // Another organization's disabled worker is that organization's side.
      const asleep = await insertIdentity(t, { organizationId: globex.organizationId, enabled: false });
      expect((await check(bearer(acme), a, asleep).expect(200)).body.reason).toBe('denied_by_peer');
    });

    it('records nothing', async () => {
      const a = await agent(acme);
      const g = await agent(globex);
      await check(bearer(acme), a, g).expect(200);
      expect(await t.db.query(`SELECT id FROM admission_decisions WHERE requester_id = $1`, [a.id])).toEqual([]);
    });

    it("404 unless one of the two is the caller's, without revealing whether the others exist", async () => {
      const a = await agent(acme);
      const g = await agent(globex);
      const i = await agent(initech);
      const foreign = await check(bearer(acme), g, i).expect(404);
      const missing = await check(bearer(acme), 'no-such-agent', 'no-such-other').expect(404);
      expect(foreign.body.code).toBe('identity_not_found');
      expect(missing.body.detail).toBe(foreign.body.detail);
      const unknownPeer = await check(bearer(acme), a, 'no-such-agent').expect(404);
      expect(unknownPeer.body).toMatchObject({
        code: 'identity_not_found',
        detail: "No identity with handle 'no-such-agent'.",
      });
    });

    it('validates the body', async () => {
      const a = await agent(acme);
      expect(
        (await t.http().post('/api/v1/admission/check').set(bearer(acme)).send({ requester: a.handle }).expect(400))
          .body.code,
      ).toBe('validation_failed');
      await t
        .http()
        .post('/api/v1/admission/check')
        .set(bearer(acme))
        .send({ requester: a.handle, worker: a.handle, verbose: true })
        .expect(400);
    });
  });

  describe('decisions', () => {
    let log: ConsoleAccount;
    let peer: ConsoleAccount;
    let a: IdentityFixture;
    let a2: IdentityFixture;
    let g: IdentityFixture;
    let block: { id: string };
    let outbound: { id: string };

    beforeAll(async () => {
      log = await signup(t, 'Logged');
      peer = await signup(t, 'Logged Peer');
      a = await agent(log);
      a2 = await agent(log);
      g = await agent(peer);
      outbound = await rule(log, a, 'outbound', 'allow', { type: 'identity', handle: g.handle });
      block = await rule(peer, g, 'inbound', 'block', { type: 'identity', handle: a.handle });
      await rule(log, a2, 'inbound', 'block', { type: 'identity', handle: a.handle });

      expect(await call(a, g)).toMatchObject({ allowed: false, reason: 'blocked_by_worker' });
      expect(await call(g, a)).toMatchObject({ allowed: false, reason: 'not_permitted_by_requester' });
      expect(await call(a, a2)).toMatchObject({ allowed: false, reason: 'blocked_by_worker' });
      expect(await call(a2, a)).toMatchObject({ allowed: true, reason: 'same_organization' });
      // Between two other organizations: neither side above may see it.
      expect(await call(await agent(initech), await agent(globex))).toMatchObject({ allowed: false });
    });

    type Listed = AdmissionDecisionView;
    const list = (auth: Record<string, string>, query = '') =>
      t.http().get(`/api/v1/admission/decisions${query}`).set(auth).expect(200);
    /** Denials recorded within one millisecond have no order between them; compare by pair. */
    const byPair = <T extends Pick<Listed, 'requester' | 'worker'>>(decisions: T[]) =>
      [...decisions].sort((x, y) =>
        `${x.requester.handle}>${x.worker.handle}`.localeCompare(`${y.requester.handle}>${y.worker.handle}`),
      );

    it('lists the denials where the organization owns the requester or the worker, newest first, once each', async () => {
      const res = await list(bearer(log));
      expect(res.body.next_cursor).toBeNull();
      const created = res.body.decisions.map((d: Listed) => d.created_at);
      expect(created).toEqual([...created].sort().reverse());
      expect(byPair(res.body.decisions)).toEqual(
        byPair([
          {
            id: expect.any(String),
            requester: { handle: a.handle, organization_id: log.organizationId },
            worker: { handle: a2.handle, organization_id: log.organizationId },
            allowed: false,
            skill: null,
            reason: 'blocked_by_worker',
            approval_required_by: [],
            rules: [expect.objectContaining({ identity: a2.handle, action: 'block' })],
            created_at: expect.any(String),
          },
          {
            id: expect.any(String),
            requester: { handle: g.handle, organization_id: peer.organizationId },
            worker: { handle: a.handle, organization_id: log.organizationId },
            allowed: false,
            skill: null,
            reason: 'denied_by_peer',
            approval_required_by: [],
            rules: [],
            created_at: expect.any(String),
          },
          {
            id: expect.any(String),
            requester: { handle: a.handle, organization_id: log.organizationId },
            worker: { handle: g.handle, organization_id: peer.organizationId },
            allowed: false,
            skill: null,
            reason: 'denied_by_peer',
            approval_required_by: [],
            rules: [expect.objectContaining({ id: outbound.id, action: 'allow' })],
            created_at: expect.any(String),
          },
        ]),
      );
      expect(JSON.stringify(res.body)).not.toContain(block.id);
    });

    it("the other organization sees the same cross-organization denials from its side, never the first one's rules", async () => {
      const res = await list(apiKey(await mintAdminKey(t, peer)));
      const seen = byPair<Listed>(res.body.decisions);
      expect(seen.map((d) => [d.requester.handle, d.worker.handle, d.reason, d.rules.map((r) => r.id)])).toEqual(
        [
          [a.handle, g.handle, 'blocked_by_worker', [block.id]],
          [g.handle, a.handle, 'not_permitted_by_requester', []],
        ].sort((x, y) => `${x[0]}>${x[1]}`.localeCompare(`${y[0]}>${y[1]}`)),
      );
      expect(JSON.stringify(res.body)).not.toContain(outbound.id);
    });

    it("filters by an identity of the organization; another organization's identity matches nothing", async () => {
      const res = await list(bearer(log), `?identity=${a2.handle}`);
      expect(res.body.decisions.map((d: Listed) => d.worker.handle)).toEqual([a2.handle]);
      expect((await list(bearer(log), `?identity=${g.handle}`)).body).toEqual({ decisions: [], next_cursor: null });
    });

    it('pages with limit and cursor', async () => {
      const all = (await list(bearer(log))).body.decisions.map((d: Listed) => d.id);
      const first = await list(bearer(log), '?limit=2');
      expect(first.body.decisions.map((d: Listed) => d.id)).toEqual(all.slice(0, 2));
      const second = await list(bearer(log), `?limit=2&cursor=${first.body.next_cursor}`);
      expect(second.body).toEqual({ decisions: [expect.objectContaining({ id: all[2] })], next_cursor: null });
      await t.http().get('/api/v1/admission/decisions?cursor=bogus').set(bearer(log)).expect(400);
    });

    it('an organization with no denials sees none', async () => {
      const quiet = await signup(t, 'Quiet');
      expect((await list(bearer(quiet))).body).toEqual({ decisions: [], next_cursor: null });
    });
  });
});
