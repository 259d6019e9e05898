import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { PASSWORD } from '../support/fixtures';
import { startServerProcess, type ServerProcess } from '../support/server-process';

/**
 * The directory's search runs on generated columns, SQL functions, triggers, full-text
 * search and pg_trgm: prove the embedded PostgreSQL (PGlite) serves it too.
 */
describe('discovery on the embedded database', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'a2a-embedded-directory-'));
  let server: ServerProcess;
  beforeAll(async () => {
    server = await startServerProcess({ DATA_DIR: dataDir, PUBLIC_BASE_URL: 'https://agents.example.test' });
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('signup, create, list and search', async () => {
    const http = () => request(server.baseUrl);
    const session = await http()
      .post('/api/v1/console/signup')
      .send({ organization_name: 'Local', email: 'dir@local.test', password: PASSWORD })
      .expect(201);
    const auth = { Authorization: `Bearer ${session.body.token}` };
    await http()
      .post('/api/v1/identities')
      .set(auth)
      .send({
        agent_handle: 'local-translator',
        display_name: 'Translator',
        publicly_discoverable: true,
        skills: [{ id: 'translate', name: 'Translation', description: 'Translates documents.', tags: ['Language'] }],
      })
      .expect(201);
    await http().patch('/api/v1/identities/local-translator/settings').set(auth).send({ enabled: true }).expect(200);
    const signup = await http().post('/api/v1/agent-signup').send({ agent_handle: 'local-orphan' }).expect(201);
    await http().post('/api/v1/identities/claim').set(auth).send({ claim_code: signup.body.claim.code }).expect(200);

    const card = await http().get('/a2a/local-translator/card').expect(200);
    expect(card.body).toMatchObject({
      name: 'Translator',
      provider: { organization: 'Local' },
      url: 'https://agents.example.test/a2a/local-translator',
    });
    // A misspelt name too: the names' lexicon and its trigram index (pg_trgm is built into PGlite).
    for (const query of [{ q: 'transl docum' }, { q: 'trnaslator' }, { skill: 'TRANSLATE' }, { tag: 'language' }]) {
      const res = await http().get('/a2a/directory').query(query).expect(200);
      expect(res.body.agents.map((a: { agent_handle: string }) => a.agent_handle)).toEqual(['local-translator']);
    }
    const org = await http().get('/api/v1/identities/a2a/directory').query({ q: 'local' }).set(auth).expect(200);
    expect(org.body.identities.map((i: { agent_handle: string }) => i.agent_handle).sort()).toEqual([
      'local-orphan',
      'local-translator',
    ]);
    const misspelt = await http().get('/api/v1/identities/a2a/directory').query({ q: 'orphen' }).set(auth).expect(200);
    expect(misspelt.body.identities.map((i: { agent_handle: string }) => i.agent_handle)).toEqual(['local-orphan']);
  });
});
