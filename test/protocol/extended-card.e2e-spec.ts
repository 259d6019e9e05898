import { startApp, type TestApp } from '../support/app';
import { enabledAgent, rpc, type Agent } from '../support/a2a';
import { schemaErrors, verifyCard, type Jwks } from '../support/agent-cards';
import {
  agentSignup,
  apiKey,
  bearer,
  createEnabledIdentity,
  signup,
  unique,
  type ConsoleAccount,
} from '../support/fixtures';

/**
 * Skills of visibility `admitted` and the extended Agent Card (docs/api.md §3, §4):
 * admitted skills are never on the public card nor found through the public
 * directory; GetExtendedAgentCard / agent/getAuthenticatedExtendedCard give them to a
 * caller that passes the protocol's checks.
 */
describe('extended Agent Card', () => {
  let t: TestApp;
  let acme: ConsoleAccount;
  let worker: Agent;
  let requester: Agent;
  const word = unique('vis').replace(/-/g, '');
  const secretWord = unique('hush').replace(/-/g, '');
  const skills = [
    { id: `pub-${word}`, name: `Public ${word}`, description: 'Open to all.', tags: [`tag${word}`] },
    {
      id: `adm-${secretWord}`,
      name: `Admitted ${secretWord}`,
      description: `Only for partners ${secretWord}.`,
      tags: [`tag${secretWord}`],
      visibility: 'admitted',
    },
  ];
  const withoutVisibility = skills.map(({ visibility: _visibility, ...skill }) => skill);

  beforeAll(async () => {
    t = await startApp();
    acme = await signup(t, 'Acme Extended');
    const created = await createEnabledIdentity(t, acme, { description: 'Partners.', skills });
    worker = { id: created.id, handle: created.handle, key: created.key } as Agent;
    await t
      .http()
      .patch(`/api/v1/identities/${worker.handle}/settings`)
      .set(bearer(acme))
      .send({ publicly_discoverable: true })
      .expect(200);
    requester = await enabledAgent(t, acme);
  });
  afterAll(() => t.close());

  const jwks = async (): Promise<Jwks> => (await t.http().get('/.well-known/jwks.json').expect(200)).body;

  describe('skill visibility', () => {
    it('is part of the identity: public by default, admitted on request; anything else → 400 naming the field', async () => {
      const res = await t.http().get(`/api/v1/identities/${worker.handle}`).set(bearer(acme)).expect(200);
      expect(res.body.skills.map((skill: { visibility: string }) => skill.visibility)).toEqual(['public', 'admitted']);
      const bad = await t
        .http()
        .patch(`/api/v1/identities/${worker.handle}`)
        .set(apiKey(worker.key))
        .send({ skills: [{ ...skills[0], visibility: 'secret' }] })
        .expect(400);
      expect(bad.body.errors).toEqual([expect.objectContaining({ field: 'skills[0].visibility' })]);
      const patched = await t
        .http()
        .patch(`/api/v1/identities/${worker.handle}`)
        .set(apiKey(worker.key))
        .send({ skills })
        .expect(200);
      expect(patched.body.skills.map((skill: { visibility: string }) => skill.visibility)).toEqual([
        'public',
        'admitted',
      ]);
    });

    it('agent signup takes it too', async () => {
      const signed = await agentSignup(t, { skills: [{ ...skills[1], id: 'x' }] });
      const [row] = await t.db.query(`SELECT skills FROM identities WHERE id = $1`, [signed.id]);
      expect(row.skills[0].visibility).toBe('admitted');
    });

    it('admitted skills are on neither generation of the public card, nor in the directory, nor found by its search', async () => {
      for (const version of [undefined, '1.0']) {
        const req = t.http().get(`/a2a/${worker.handle}/card`);
        const card = (await (version ? req.set('A2A-Version', version) : req).expect(200)).body;
        expect(card.skills).toEqual([withoutVisibility[0]]);
        expect(JSON.stringify(card)).not.toContain(secretWord);
      }
      const listed = await t.http().get('/a2a/directory').query({ q: word }).expect(200);
      expect(listed.body.agents.map((agent: { agent_handle: string }) => agent.agent_handle)).toEqual([worker.handle]);
      expect(JSON.stringify(listed.body)).not.toContain(secretWord);
      // A search finds it by its public words only (any word finds a card): the admitted ones add nothing.
      const both = await t
        .http()
        .get('/a2a/directory')
        .query({ q: `partners ${secretWord}` })
        .expect(200);
      expect(both.body.agents.map((agent: { agent_handle: string }) => agent.agent_handle)).toEqual([worker.handle]);
      expect(JSON.stringify(both.body)).not.toContain(secretWord);
      for (const query of [
        { q: secretWord },
        { skill: skills[1].id },
        { skill: skills[1].name },
        { tag: skills[1].tags[0] },
      ]) {
        expect((await t.http().get('/a2a/directory').query(query).expect(200)).body.agents).toEqual([]);
      }
      for (const query of [{ skill: skills[0].id }, { tag: skills[0].tags[0] }]) {
        expect((await t.http().get('/a2a/directory').query(query).expect(200)).body.agents).toHaveLength(1);
      }
    });
  });

  describe('GetExtendedAgentCard / agent/getAuthenticatedExtendedCard', () => {
    it("v1.0: an admitted caller gets the worker's signed v1.0 card with its admitted skills", async () => {
      const res = await rpc(t, worker.handle, requester.key, 'GetExtendedAgentCard', {}, '1.0').expect(200);
      const card = res.body.result;
      expect(card.skills).toEqual(withoutVisibility);
      expect(card.capabilities.extendedAgentCard).toBe(true);
      expect(card.name).toBe(worker.handle);
      expect(schemaErrors(card, '1.0')).toEqual([]);
      await verifyCard(card, await jwks());
      await expect(verifyCard({ ...card, skills: [withoutVisibility[0]] }, await jwks())).rejects.toThrow();
    });

    it('v0.3: the same card in the v0.3 form, signed over that form', async () => {
      const res = await rpc(t, worker.handle, requester.key, 'agent/getAuthenticatedExtendedCard', {}).expect(200);
      const card = res.body.result;
      expect(card.skills).toEqual(withoutVisibility);
      expect(card).toMatchObject({
        supportsAuthenticatedExtendedCard: true,
        url: `${t.config.publicBaseUrl}/a2a/${worker.handle}`,
        preferredTransport: 'JSONRPC',
      });
      expect(schemaErrors(card, '0.3')).toEqual([]);
      // Signed over the v0.3 form the caller receives.
      await verifyCard(card, await jwks());
      await expect(verifyCard({ ...card, skills: [withoutVisibility[0]] }, await jwks())).rejects.toThrow();
    });

    it('only through the protocol checks: no credential 401, not admitted 403, unknown worker 404', async () => {
      const anonymous = await t
        .http()
        .post(`/a2a/${worker.handle}`)
        .set('A2A-Version', '1.0')
        .send({ jsonrpc: '2.0', id: 1, method: 'GetExtendedAgentCard', params: {} });
      expect(anonymous.status).toBe(401);
      const stranger = await enabledAgent(t, await signup(t));
      for (const [method, version] of [
        ['GetExtendedAgentCard', '1.0'],
        ['agent/getAuthenticatedExtendedCard', '0.3'],
      ] as const) {
        const denied = await rpc(t, worker.handle, stranger.key, method, {}, version).expect(403);
        expect(denied.body.error.data.reason).toBe('admission_denied');
        expect(JSON.stringify(denied.body)).not.toContain(secretWord);
      }
      const nobody = await rpc(t, unique('nobody'), requester.key, 'GetExtendedAgentCard', {}, '1.0').expect(404);
      expect(nobody.body.error.data.reason).toBe('worker_not_found');
    });
  });
});
