import { randomUUID } from 'node:crypto';
import { startApp, type TestApp } from '../support/app';
import { apiKey, bearer, insertIdentity, mintAdminKey, mintKeyDirectly, signup, type ConsoleAccount, type IdentityFixture } from '../support/fixtures';
import { PROTOCOL_CASES, type Caller, type Party, type RuleSpec } from './protocol-matrix';

/** PROTOCOL_CASES (protocol-matrix.ts): every credential and admission case of `POST /a2a/{handle}`. */
describe('protocol endpoint: credentials and admission', () => {
  let t: TestApp;
  let orgs: Record<Party['org'], ConsoleAccount>;

  beforeAll(async () => {
    t = await startApp();
    orgs = { acme: await signup(t, 'Acme'), globex: await signup(t, 'Globex') };
  });
  afterAll(() => t.close());

  async function identity(party: Party): Promise<IdentityFixture> {
    const claimed = party.claimed !== false;
    const created = await insertIdentity(t, {
      organizationId: claimed ? orgs[party.org].organizationId : null,
      enabled: claimed && party.enabled !== false,
      publiclyDiscoverable: party.publiclyDiscoverable,
      allowPublicEgress: party.allowPublicEgress,
      filterMode: party.filterMode,
    });
    if (party.deleted) await t.db.query(`UPDATE identities SET status = 'deleted', deleted_at = now(), enabled = false WHERE id = $1`, [created.id]);
    return created;
  }

  async function credential(caller: Caller, requester: IdentityFixture | null): Promise<Record<string, string>> {
    switch (caller.kind) {
      case 'none':
        return {};
      case 'malformed':
        return apiKey('a2a_agt_notAKeyAtAll');
      case 'revokedAgent': {
        const key = await mintKeyDirectly(t, (await identity({ org: 'acme', enabled: true })).id);
        await t.http().post('/api-keys/self/revoke').set(apiKey(key)).expect(200);
        return apiKey(key);
      }
      case 'admin':
        return apiKey(await mintAdminKey(t, orgs.acme));
      case 'console':
        return bearer(orgs.acme);
      case 'agent':
        return apiKey(await mintKeyDirectly(t, requester!.id));
    }
  }

  async function insertRule(rule: RuleSpec, requester: IdentityFixture, worker: IdentityFixture, workerOrg: Party['org']): Promise<void> {
    const [owner, ownerOrg, peer, peerOrg] = rule.owner === 'requester'
      ? [requester, 'acme' as const, worker, workerOrg]
      : [worker, workerOrg, requester, 'acme' as const];
    await t.db.query(
      `INSERT INTO contact_rules (identity_id, organization_id, direction, action, peer_type, peer_identity_id, peer_organization_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [owner.id, orgs[ownerOrg].organizationId, rule.direction, rule.action, rule.peer,
        rule.peer === 'identity' ? peer.id : null, rule.peer === 'organization' ? orgs[peerOrg].organizationId : null],
    );
  }

  it.each(PROTOCOL_CASES.map((c) => [c.name, c] as const))('%s', async (_, c) => {
    const requester = c.caller.kind === 'agent' ? await identity(c.caller.identity) : null;
    const worker = c.worker === 'missing' ? null : await identity(c.worker);
    for (const rule of c.rules ?? []) await insertRule(rule, requester!, worker!, (c.worker as Party).org);
    const handle = worker?.handle ?? `nobody-${randomUUID().slice(0, 8)}`;

    const res = await t.http().post(`/a2a/${handle}`).set(await credential(c.caller, requester))
      .send({ jsonrpc: '2.0', id: 'case', method: 'tasks/get', params: { id: randomUUID() } });

    expect({ status: res.status, reason: res.body.error?.data?.reason ?? null }).toEqual({ status: c.status, reason: c.reason });
    // A call that reaches its method answers 200 with the method's own JSON-RPC error.
    if (c.status === 200) expect(res.body).toMatchObject({ id: 'case', error: { code: -32001 } });
    else expect(res.body).toMatchObject({ jsonrpc: '2.0', id: 'case', error: { code: expect.any(Number), data: { status: c.status } } });
  });

  it('admission runs before the method: a denied call never reaches it, and the denial is recorded for the worker\'s side', async () => {
    const requester = await identity({ org: 'acme', enabled: true });
    const worker = await identity({ org: 'globex', enabled: true });
    const res = await t.http().post(`/a2a/${worker.handle}`).set(apiKey(await mintKeyDirectly(t, requester.id)))
      .send({ jsonrpc: '2.0', id: 1, method: 'no/such/method', params: {} }).expect(403);
    expect(res.body.error.data.reason).toBe('admission_denied');
    expect(res.body.error.message).not.toMatch(/rule|whitelist|requester|worker/i);
    const denials = await t.db.query(`SELECT reason FROM admission_decisions WHERE requester_id = $1 AND worker_id = $2`, [requester.id, worker.id]);
    expect(denials).toEqual([{ reason: 'not_permitted_by_requester' }]);
    const [{ count }] = await t.db.query(`SELECT count(*)::int AS count FROM tasks WHERE requester_identity_id = $1`, [requester.id]);
    expect(count).toBe(0);
  });
});
