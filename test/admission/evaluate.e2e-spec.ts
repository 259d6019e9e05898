import { AdmissionService } from '../../src/admission/admission.service';
import { Database } from '../../src/database/database';
import { IdentitiesService } from '../../src/identities/identities.service';
import type { Identity } from '../../src/identities/identity.entity';
import { startApp, type TestApp } from '../support/app';
import { insertIdentity, signup, type ConsoleAccount, type IdentityOptions } from '../support/fixtures';
import { statementsOf } from '../support/statements';

/**
 * AdmissionService.evaluate, as the protocol endpoint calls it: both identities are
 * already loaded; evaluate fetches the rules in one query and records denials.
 */
describe('AdmissionService.evaluate', () => {
  let t: TestApp;
  let admission: AdmissionService;
  let acme: ConsoleAccount;
  let globex: ConsoleAccount;

  beforeAll(async () => {
    t = await startApp();
    admission = t.app.get(AdmissionService);
    acme = await signup(t, 'Acme');
    globex = await signup(t, 'Globex');
  });
  afterAll(() => t.close());

  const load = async (id: string): Promise<Identity> => (await t.app.get(IdentitiesService).findById(id))!;
  const enabledIn = async (account: ConsoleAccount, settings: Omit<IdentityOptions, 'organizationId'> = {}) =>
    load((await insertIdentity(t, { organizationId: account.organizationId, enabled: true, ...settings })).id);

  async function insertRule(
    owner: Identity,
    direction: string,
    action: string,
    peer: { identity?: Identity; organizationId?: string },
  ) {
    const [row] = (await t.db.query(
      `INSERT INTO contact_rules (identity_id, organization_id, direction, action, peer_type, peer_identity_id, peer_organization_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
      [
        owner.id,
        owner.organizationId,
        direction,
        action,
        peer.identity ? 'identity' : 'organization',
        peer.identity?.id ?? null,
        peer.organizationId ?? null,
      ],
    )) as Array<{ id: string }>;
    return row.id;
  }

  const denialsOf = (requester: Identity) =>
    t.db.query(`SELECT * FROM admission_decisions WHERE requester_id = $1 ORDER BY created_at`, [
      requester.id,
    ]) as Promise<Array<Record<string, unknown>>>;

  it('admits same-organization peers and records nothing', async () => {
    const a = await enabledIn(acme);
    const b = await enabledIn(acme);
    await expect(admission.evaluate(a, b)).resolves.toMatchObject({ allowed: true, reason: 'same_organization' });
    expect(await denialsOf(a)).toEqual([]);
  });

  it('denies a private cross-organization call by default (whitelist) and records the denial', async () => {
    const a = await enabledIn(acme);
    const g = await enabledIn(globex);
    const decision = await admission.evaluate(a, g);
    expect(decision).toMatchObject({
      allowed: false,
      reason: 'not_permitted_by_requester',
      decidedBy: 'requester',
      rule: null,
    });
    expect(await denialsOf(a)).toEqual([
      expect.objectContaining({
        requester_id: a.id,
        requester_handle: a.agentHandle,
        requester_organization_id: acme.organizationId,
        worker_id: g.id,
        worker_handle: g.agentHandle,
        worker_organization_id: globex.organizationId,
        reason: 'not_permitted_by_requester',
        decided_by: 'requester',
        rule_id: null,
        requester_rule: null,
        worker_rule: null,
      }),
    ]);
  });

  it('admits a cross-organization call when both sides allow, by identity or by organization', async () => {
    const a = await enabledIn(acme);
    const g = await enabledIn(globex);
    await insertRule(a, 'outbound', 'allow', { identity: g });
    await insertRule(g, 'both', 'allow', { organizationId: acme.organizationId });
    await expect(admission.evaluate(a, g)).resolves.toMatchObject({ allowed: true, reason: 'mutual_permit' });
    // Reversed, g's `both` rule still permits, but a's outbound rule says nothing about inbound calls.
    await expect(admission.evaluate(g, a)).resolves.toMatchObject({
      allowed: false,
      reason: 'not_permitted_by_worker',
    });
  });

  it('lets public egress reach a publicly discoverable worker, unless the worker blocks', async () => {
    const a = await enabledIn(acme, { allowPublicEgress: true });
    const g = await enabledIn(globex, { publiclyDiscoverable: true });
    await expect(admission.evaluate(a, g)).resolves.toMatchObject({ allowed: true, reason: 'public_egress' });
    const block = await insertRule(g, 'inbound', 'block', { identity: a });
    const decision = await admission.evaluate(a, g);
    expect(decision).toMatchObject({
      allowed: false,
      reason: 'blocked_by_worker',
      decidedBy: 'worker',
      rule: { id: block },
    });
    const [recorded] = await denialsOf(a);
    expect(recorded).toMatchObject({
      reason: 'blocked_by_worker',
      decided_by: 'worker',
      rule_id: block,
      requester_rule: null,
      worker_rule: {
        id: block,
        identity: g.agentHandle,
        direction: 'inbound',
        action: 'block',
        peer: { type: 'identity', handle: a.agentHandle, organization_id: acme.organizationId },
        note: '',
      },
    });
  });

  it('blacklist filter modes admit a private call without allow rules', async () => {
    const a = await enabledIn(acme, { filterMode: 'blacklist' });
    const g = await enabledIn(globex, { filterMode: 'blacklist' });
    await expect(admission.evaluate(a, g)).resolves.toMatchObject({ allowed: true, reason: 'mutual_permit' });
  });

  it("reports the participants' state before any rule, without reading rules", async () => {
    const a = await enabledIn(acme);
    const disabled = await load((await insertIdentity(t, { organizationId: acme.organizationId, enabled: false })).id);
    const unclaimed = await load((await insertIdentity(t, { organizationId: null })).id);
    const query = jest.spyOn(t.db, 'query');
    const hot = jest.spyOn(t.app.get(Database), 'prepared');
    try {
      await expect(admission.evaluate(unclaimed, a)).resolves.toMatchObject({
        allowed: false,
        reason: 'requester_unclaimed',
      });
      await expect(admission.evaluate(disabled, a)).resolves.toMatchObject({
        allowed: false,
        reason: 'requester_disabled',
      });
      await expect(admission.evaluate(a, disabled)).resolves.toMatchObject({
        allowed: false,
        reason: 'worker_unavailable',
      });
      expect(query).not.toHaveBeenCalled();
      expect(hot).not.toHaveBeenCalled();
    } finally {
      query.mockRestore();
      hot.mockRestore();
    }
    expect((await denialsOf(unclaimed))[0]).toMatchObject({ requester_organization_id: null, decided_by: 'requester' });
  });

  it('fetches the rules of both sides in one query, whatever else they own', async () => {
    const a = await enabledIn(acme);
    const g = await enabledIn(globex);
    await insertRule(a, 'outbound', 'allow', { organizationId: globex.organizationId });
    await insertRule(g, 'inbound', 'allow', { identity: a });
    for (let i = 0; i < 5; i++) {
      const other = await enabledIn(globex);
      await insertRule(a, 'both', 'block', { identity: other });
      await insertRule(other, 'both', 'block', { identity: a });
    }
    const query = jest.spyOn(t.db, 'query');
    const hot = jest.spyOn(t.app.get(Database), 'prepared');
    try {
      await expect(admission.evaluate(a, g)).resolves.toMatchObject({ allowed: true, reason: 'mutual_permit' });
      expect(query.mock.calls.length + hot.mock.calls.length).toBe(1);
    } finally {
      query.mockRestore();
      hot.mockRestore();
    }
  });

  describe('admitCall: the parties and the decision of a protocol call, in one round trip', () => {
    const handleOf = (identity: Identity) => identity.agentHandle;

    it('reads both parties and the rules of both sides with one statement', async () => {
      const a = await enabledIn(acme);
      const g = await enabledIn(globex);
      await insertRule(a, 'outbound', 'allow', { organizationId: globex.organizationId });
      await insertRule(g, 'inbound', 'allow', { identity: a });
      for (let i = 0; i < 3; i++) {
        const other = await enabledIn(globex);
        await insertRule(a, 'both', 'block', { identity: other });
        await insertRule(g, 'both', 'block', { identity: other });
      }
      let call: Awaited<ReturnType<typeof admission.admitCall>> = null;
      const sent = await statementsOf(async () => (call = await admission.admitCall(a.id, handleOf(g))));
      expect(call).toMatchObject({
        requester: { id: a.id },
        worker: { id: g.id },
        decision: { allowed: true, reason: 'mutual_permit' },
      });
      expect(sent).toHaveLength(1);
    });

    it('decides as evaluate does, and records a denial the same way', async () => {
      const a = await enabledIn(acme);
      const g = await enabledIn(globex);
      await insertRule(g, 'inbound', 'block', { identity: a });
      const call = await admission.admitCall(a.id, handleOf(g));
      expect(call?.decision).toEqual(await admission.decide(a, g));
      expect(call?.decision.allowed).toBe(false);
      expect(await denialsOf(a)).toHaveLength(1);
      expect((await denialsOf(a))[0]).toMatchObject({ worker_id: g.id, reason: call!.decision.reason });
    });

    it('reads the rule timestamps back as dates', async () => {
      const a = await enabledIn(acme);
      const g = await enabledIn(globex);
      await insertRule(a, 'outbound', 'allow', { identity: g });
      await insertRule(g, 'inbound', 'allow', { organizationId: acme.organizationId });
      const call = await admission.admitCall(a.id, handleOf(g));
      const rules = [call!.decision.effective.requester, call!.decision.effective.worker];
      expect(rules).toHaveLength(2);
      for (const rule of rules) {
        expect(rule?.createdAt).toBeInstanceOf(Date);
        expect(rule?.createdAt.getTime()).not.toBeNaN();
      }
      expect(call!.decision).toEqual(await admission.decide(a, g));
    });

    it('calls that arrive together share one statement, each answered about its own pair', async () => {
      const a = await enabledIn(acme);
      const b = await enabledIn(acme);
      const g = await enabledIn(globex);
      await insertRule(a, 'outbound', 'allow', { identity: g });
      await insertRule(g, 'inbound', 'allow', { identity: a });
      let calls: Array<Awaited<ReturnType<typeof admission.admitCall>>> = [];
      const sent = await statementsOf(
        async () =>
          (calls = await Promise.all([
            admission.admitCall(a.id, handleOf(g)),
            admission.admitCall(a.id, handleOf(b)),
            admission.admitCall(g.id, handleOf(a)),
            admission.admitCall(a.id, 'nobody-has-this-handle'),
          ])),
      );
      // One read of the parties and rules (the denial of g → a is recorded besides).
      expect(sent.filter((text) => text.startsWith('WITH asked AS'))).toHaveLength(1);
      const [ag, ab, ga, nobody] = calls;
      expect(ag).toMatchObject({ worker: { id: g.id }, decision: { allowed: true, reason: 'mutual_permit' } });
      expect(ab).toMatchObject({ worker: { id: b.id }, decision: { allowed: true, reason: 'same_organization' } });
      expect(ga).toMatchObject({ requester: { id: g.id }, worker: { id: a.id }, decision: { allowed: false } });
      expect(ga!.decision).toEqual(await admission.decide(g, a));
      expect(nobody).toBeNull();
    });

    it('has no worker for an unknown, disabled or unclaimed handle', async () => {
      const a = await enabledIn(acme);
      const disabled = await load(
        (await insertIdentity(t, { organizationId: acme.organizationId, enabled: false })).id,
      );
      const unclaimed = await load((await insertIdentity(t, { organizationId: null })).id);
      await expect(admission.admitCall(a.id, 'nobody-has-this-handle')).resolves.toBeNull();
      await expect(admission.admitCall(a.id, handleOf(disabled))).resolves.toBeNull();
      await expect(admission.admitCall(a.id, handleOf(unclaimed))).resolves.toBeNull();
      expect(await denialsOf(a)).toHaveLength(0);
    });

    it('admits a call to oneself (one row is both parties)', async () => {
      const a = await enabledIn(acme);
      await expect(admission.admitCall(a.id, handleOf(a))).resolves.toMatchObject({
        requester: { id: a.id },
        worker: { id: a.id },
        decision: { allowed: true },
      });
    });
  });
});
