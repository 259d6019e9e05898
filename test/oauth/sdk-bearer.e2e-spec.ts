import { TaskState, type Task } from '@a2a-js/sdk';
import type { TestApp } from '../support/app';
import { agentPair, reply, startBlocking, type Agent } from '../support/a2a';
import { EVERY_BINDING, say, sdkClient, startAppForCards } from '../support/a2a-sdk';
import { apiKey } from '../support/fixtures';

/**
 * The official SDK client on every binding with an access token for the requester's key
 * (docs/api.md §17): the token URL is the one the card declares, the calls carry
 * `Authorization: Bearer` (gRPC: as metadata), and the task records the key's identity.
 */
describe('the official SDK client with a bearer access token', () => {
  let t: TestApp;
  let requester: Agent;
  let worker: Agent;
  let token: string;

  beforeAll(async () => {
    t = await startAppForCards();
    ({ requester, worker } = await agentPair(t));
    const card = (await t.http().get(`/a2a/${worker.handle}/card`).set('A2A-Version', '1.0').expect(200)).body;
    const tokenUrl: string = card.securitySchemes.oauth2.oauth2SecurityScheme.flows.clientCredentials.tokenUrl;
    const id = (await t.http().get('/api-keys/self').set(apiKey(requester.key)).expect(200)).body.id;
    const res = await fetch(tokenUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${id}:${requester.key}`).toString('base64')}`,
      },
      body: 'grant_type=client_credentials',
    });
    expect(res.status).toBe(200);
    token = ((await res.json()) as { access_token: string }).access_token;
  });
  afterAll(() => t.close());

  it.each(EVERY_BINDING)("%s, A2A %s: a send with the token is the key's identity's", async (binding, version) => {
    const { client } = await sdkClient(t, requester, worker, binding, version, token);
    const sent = await startBlocking(t, worker, () => client.sendMessage(say(`by token over ${binding} ${version}`)));
    await reply(t, sent.taskId, worker.key, {
      state: 'completed',
      message: { parts: [{ kind: 'text', text: 'ok' }] },
    }).expect(200);
    expect(((await sent.response) as Task).status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const [row] = await t.db.query(`SELECT requester_identity_id FROM tasks WHERE id = $1`, [sent.taskId]);
    expect(row.requester_identity_id).toBe(requester.id);
  });

  it('once the key is revoked, the token fails on every binding at the next call', async () => {
    await t.http().post('/api-keys/self/revoke').set(apiKey(requester.key)).expect(200);
    for (const [binding, version] of EVERY_BINDING) {
      const { client } = await sdkClient(t, requester, worker, binding, version, token);
      const refused = await client.sendMessage(say('after revocation')).then(
        () => null,
        (error: Error) => error,
      );
      expect({ binding, version, refused: refused?.message }).toEqual({
        binding,
        version,
        refused: expect.stringMatching(/unauthenticated|401|revoked/i),
      });
    }
  });
});
