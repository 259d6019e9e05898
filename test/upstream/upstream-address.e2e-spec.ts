import { startApp, type TestApp } from '../support/app';
import { enabledAgent, rpc, v03Message, type Agent } from '../support/a2a';
import { eventually } from '../support/eventually';
import { apiKey, bearer, signup, type ConsoleAccount } from '../support/fixtures';

/**
 * An upstream whose host name the address rules refuse (docs/api.md §14): the forward
 * fails at its first attempt — a retry would be refused the same way — and the task's
 * status message says so in one text, whether the name resolves to a loopback address
 * or does not resolve at all.
 */
describe('an upstream destination the address rules refuse', () => {
  let t: TestApp;
  let acme: ConsoleAccount;
  let requester: Agent;

  beforeAll(async () => {
    // Private networks not allowed; the retry schedule as by default (its first wait is 1 s).
    t = await startApp({ EVENTS_POLL_INTERVAL_MS: '50' });
    acme = await signup(t, 'Acme');
    requester = await enabledAgent(t, acme);
  });
  afterAll(() => t.close());

  it.each([
    ['resolves to a loopback address', 'https://localhost:9/a2a'],
    ['does not resolve', 'https://nothing-here.invalid/a2a'],
  ])('a name that %s fails the task at once, in the same words', async (_case, url) => {
    const worker = await enabledAgent(t, acme);
    await t
      .http()
      .put(`/api/v1/identities/${worker.handle}/upstream`)
      .set(bearer(acme))
      .send({ url, protocol_version: '1.0', binding: 'JSONRPC' })
      .expect(200);
    // A test of it reads through the same rules, and says so in the same words.
    const tested = await t
      .http()
      .post(`/api/v1/identities/${worker.handle}/upstream/test`)
      .set(bearer(acme))
      .send({ url })
      .expect(200);
    expect(tested.body).toMatchObject({
      reachable: false,
      reason: 'its host name does not resolve to an allowed address',
      problem: { code: 'upstream_card_unreachable' },
    });
    const res = await rpc(t, worker.handle, requester.key, 'message/send', {
      message: v03Message('anyone?'),
      configuration: { blocking: false },
    }).expect(200);
    const taskId = res.body.result.id as string;
    const failed = await eventually(
      () =>
        t
          .http()
          .get(`/api/v1/tasks/${taskId}`)
          .set(apiKey(requester.key))
          .then((r) => r.body as { status: { state: string; message: { parts: Array<{ text: string }> } } }),
      (task) => task.status.state === 'failed',
      3_000,
    );
    expect(failed.status.message.parts[0].text).toBe(
      'The upstream agent could not be reached: its host name does not resolve to an allowed address.',
    );
    const forwards = (await t.db.query(`SELECT status, attempts FROM upstream_forwards WHERE task_id = $1`, [
      taskId,
    ])) as Array<{ status: string; attempts: number }>;
    expect(forwards).toEqual([{ status: 'failed', attempts: 1 }]);
  });
});
