import { TaskState, type StreamResponse, type Task } from '@a2a-js/sdk';
import { type TestApp } from '../support/app';
import { enabledAgent, reply, type Agent } from '../support/a2a';
import { EVERY_BINDING, say, sdkClient, startAppForCards } from '../support/a2a-sdk';
import { apiKey, mintAdminKey, signup, type ConsoleAccount } from '../support/fixtures';

/**
 * A first contact approved by a person (docs/api.md §16), as the official SDK client
 * sees it on every binding and generation: the task answers `auth-required` at once;
 * once the worker's organization approves and the worker replies through REST, it is
 * `completed`. A stream stays open through the approval.
 */
describe('approval through every binding of the official SDK client', () => {
  let t: TestApp;
  let acme: ConsoleAccount;
  let globex: ConsoleAccount;
  let globexAdmin: string;

  beforeAll(async () => {
    t = await startAppForCards();
    acme = await signup(t, 'Acme');
    globex = await signup(t, 'Globex');
    globexAdmin = await mintAdminKey(t, globex);
  });
  afterAll(() => t.close());

  /** Approves the pending request of the worker (its organization's admin key). */
  async function approve(worker: Agent): Promise<void> {
    const pending = await t
      .http()
      .get(`/api/v1/approvals?state=pending&identity=${worker.handle}`)
      .set(apiKey(globexAdmin))
      .expect(200);
    expect(pending.body.approvals).toHaveLength(1);
    await t
      .http()
      .post(`/api/v1/approvals/${pending.body.approvals[0].id}/approve`)
      .set(apiKey(globexAdmin))
      .send({ remember: 'once' })
      .expect(200);
  }

  describe.each(EVERY_BINDING)('%s, A2A %s', (binding, version) => {
    let requester: Agent;
    let worker: Agent;

    beforeEach(async () => {
      requester = await enabledAgent(t, acme, { filterMode: 'blacklist' });
      worker = await enabledAgent(t, globex, { filterMode: 'approval' });
    });

    it('a blocking send answers auth-required; approved and replied to, the task is completed', async () => {
      const { client } = await sdkClient(t, requester, worker, binding, version);
      const held = (await client.sendMessage(say('Draft the invoice'))) as Task;
      expect(held.status?.state).toBe(TaskState.TASK_STATE_AUTH_REQUIRED);
      expect(held.status?.message?.parts[0].content).toEqual({
        $case: 'text',
        value: "This task waits for the worker's organization to approve it.",
      });
      await t.http().get(`/api/v1/tasks/${held.id}`).set(apiKey(worker.key)).expect(404);
      await approve(worker);
      await reply(t, held.id, worker.key, {
        state: 'completed',
        message: { parts: [{ kind: 'text', text: 'sent' }] },
      }).expect(200);
      const done = await client.getTask({ tenant: '', id: held.id, historyLength: undefined });
      expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    });

    it('a stream shows the held task and stays open through the approval until the task completes', async () => {
      const { client } = await sdkClient(t, requester, worker, binding, version);
      const stream = client.sendMessageStream(say('Write a haiku'));
      const first = (await stream.next()).value as StreamResponse;
      if (first.payload?.$case !== 'task') {
        throw new Error(`first event is ${first.payload?.$case}`);
      }
      expect(first.payload.value.status?.state).toBe(TaskState.TASK_STATE_AUTH_REQUIRED);
      await approve(worker);
      await reply(t, first.payload.value.id, worker.key, { state: 'completed' }).expect(200);
      const states: Array<TaskState | undefined> = [];
      for await (const event of stream) {
        if (event.payload?.$case === 'statusUpdate') {
          states.push(event.payload.value.status?.state);
        }
      }
      expect(states).toEqual([TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_COMPLETED]);
    });
  });
});
