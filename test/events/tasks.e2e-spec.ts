import { DeliveryDispatcher } from '../../src/events/delivery-dispatcher';
import { startApp, type TestApp } from '../support/app';
import { agentPair, enabledAgent, reply, rpc, submitTask, v03Message, type Agent } from '../support/a2a';
import { eventually } from '../support/eventually';
import { apiKey, bearer, signup, type ConsoleAccount } from '../support/fixtures';
import { startReceiver, subscribe, type Envelope, type ReceivedRequest, type Receiver } from '../support/receiver';

/**
 * Task events from the ledger (docs/api.md §8) and A2A push notifications (docs/api.md §8, "A2A push notifications"),
 * both through the events engine, to a real receiver on loopback.
 */
describe('task events and push notifications', () => {
  let t: TestApp;
  let receiver: Receiver;
  let acme: ConsoleAccount;
  let globex: ConsoleAccount;
  let requester: Agent;
  let worker: Agent;
  let bystander: Agent;

  beforeAll(async () => {
    t = await startApp({
      WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true',
      EVENTS_POLL_INTERVAL_MS: '50',
      WEBHOOK_RETRY_SCHEDULE_MS: '100,100,100',
    });
    receiver = await startReceiver();
    // Two organizations: acme's requester may call globex's public worker (public egress).
    acme = await signup(t, 'Acme');
    globex = await signup(t, 'Globex');
    requester = await enabledAgent(t, acme, { allowPublicEgress: true });
    worker = await enabledAgent(t, globex, { publiclyDiscoverable: true });
    bystander = await enabledAgent(t, globex);
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });
  beforeEach(() => {
    receiver.respond = () => 200;
  });

  const settle = () => new Promise((resolve) => setTimeout(resolve, 300));
  const text = (value: string) => ({ kind: 'text', text: value });
  /** A task's events in the order they happened: by number, a message before the status it brought. */
  const inOrder = (events: Envelope[]) =>
    [...events].sort((a, b) => a.data.seq - b.data.seq || a.type.localeCompare(b.type));

  describe('webhooks', () => {
    it('deliver signed events for task creation, messages, status changes and artifacts to both organizations', async () => {
      const requesterSide = await subscribe(t, receiver, bearer(acme), { events: ['*'] });
      const workerSide = await subscribe(t, receiver, bearer(globex), {
        events: ['task.created', 'task.message', 'task.status', 'task.artifact'],
      });
      const workerOwn = await subscribe(t, receiver, apiKey(worker.key), { events: ['*'] });
      const statusOnly = await subscribe(t, receiver, apiKey(requester.key), { events: ['task.status'] });
      const bystanderOwn = await subscribe(t, receiver, apiKey(bystander.key), { events: ['*'] });

      const task = await submitTask(t, requester, worker, 'Draft the invoice');
      await reply(t, task.id, worker.key, { state: 'working', message: { parts: [text('On it.')] } }).expect(200);
      await reply(t, task.id, worker.key, {
        artifacts: [{ artifactId: 'invoice', name: 'invoice.txt', parts: [text('Total: 42')] }],
      }).expect(200);
      await reply(t, task.id, worker.key, {
        state: 'input-required',
        message: { parts: [text('Which currency?')] },
      }).expect(200);
      await rpc(t, worker.handle, requester.key, 'message/send', {
        message: v03Message('EUR', { taskId: task.id, contextId: task.contextId }),
        configuration: { blocking: false },
      }).expect(200);
      await reply(t, task.id, worker.key, { state: 'completed' }).expect(200);
      // Refused changes emit nothing.
      await reply(t, task.id, worker.key, { state: 'working' }).expect(409);

      const expected = [
        [1, 'task.created'],
        [2, 'task.message'],
        [2, 'task.status'],
        [3, 'task.artifact'],
        [4, 'task.message'],
        [4, 'task.status'],
        [5, 'task.message'],
        [5, 'task.status'],
        [6, 'task.status'],
      ];
      for (const [side, organizationId] of [
        [requesterSide, acme.organizationId],
        [workerSide, globex.organizationId],
        [workerOwn, globex.organizationId],
      ] as const) {
        const events = inOrder(await side.take(expected.length));
        expect(events.map((e) => [e.data.seq, e.type])).toEqual(expected);
        expect(new Set(events.map((e) => e.organization_id))).toEqual(new Set([organizationId]));
        expect(events.every((e) => e.data.task.id === task.id && e.data.task.contextId === task.contextId)).toBe(true);
      }

      const events = inOrder(await requesterSide.take(expected.length));
      expect(events[0].data).toEqual({
        task: expect.objectContaining({
          kind: 'task',
          id: task.id,
          status: { state: 'submitted', timestamp: expect.any(String) },
          requester: { id: requester.id, agent_handle: requester.handle, organization_id: acme.organizationId },
          worker: { id: worker.id, agent_handle: worker.handle, organization_id: globex.organizationId },
        }),
        seq: 1,
        message: expect.objectContaining({
          kind: 'message',
          role: 'user',
          parts: [text('Draft the invoice')],
          taskId: task.id,
        }),
      });
      expect(events[2].data.status).toEqual({
        state: 'working',
        timestamp: expect.any(String),
        message: expect.objectContaining({ role: 'agent', parts: [text('On it.')] }),
      });
      expect(events[3].data.artifact).toEqual({
        artifactId: 'invoice',
        name: 'invoice.txt',
        parts: [text('Total: 42')],
        append: false,
        lastChunk: false,
      });
      expect(events[6].data.message).toMatchObject({ role: 'user', parts: [text('EUR')] });
      expect(events[7].data.status).toEqual({ state: 'submitted', timestamp: expect.any(String) });
      expect(events[8].data).toMatchObject({
        task: { status: { state: 'completed' } },
        status: { state: 'completed' },
      });
      // The REST view of the task agrees with the last event.
      const rest = await t.http().get(`/api/v1/tasks/${task.id}`).set(apiKey(requester.key)).expect(200);
      expect(events[8].data.task).toMatchObject({
        status: { state: rest.body.status.state },
        updated_at: rest.body.updated_at,
      });

      expect((await statusOnly.take(4)).map((e) => e.type)).toEqual([
        'task.status',
        'task.status',
        'task.status',
        'task.status',
      ]);
      await settle();
      expect(requesterSide.requests()).toHaveLength(expected.length);
      expect(statusOnly.requests()).toHaveLength(4);
      expect(bystanderOwn.requests()).toHaveLength(0);
    });

    it("a task within one organization is one event, for both identities' webhooks", async () => {
      const { acme: org, requester: a, worker: b } = await agentPair(t);
      const orgWide = await subscribe(t, receiver, bearer(org), { events: ['task.created'] });
      const aOwn = await subscribe(t, receiver, apiKey(a.key), { events: ['task.created'] });
      const bOwn = await subscribe(t, receiver, apiKey(b.key), { events: ['task.created'] });
      const task = await submitTask(t, a, b);
      const [one] = await orgWide.take(1);
      expect((await aOwn.take(1))[0].id).toBe(one.id);
      expect((await bOwn.take(1))[0].id).toBe(one.id);
      expect(one.data.task.id).toBe(task.id);
      await settle();
      expect(orgWide.requests()).toHaveLength(1);
    });
  });

  describe('A2A push notifications', () => {
    /** Sets a push notification config on the task, as the requester, in the given A2A version. */
    async function pushConfig(taskId: string, path: string, version: '0.3' | '1.0', extra: Record<string, unknown>) {
      const url = new URL(path, receiver.url).href;
      const res =
        version === '1.0'
          ? await rpc(
              t,
              worker.handle,
              requester.key,
              'CreateTaskPushNotificationConfig',
              { taskId, url, ...extra },
              '1.0',
            )
          : await rpc(t, worker.handle, requester.key, 'tasks/pushNotificationConfig/set', {
              taskId,
              pushNotificationConfig: { url, ...extra },
            });
      expect(res.body.error).toBeUndefined();
    }
    const at = (path: string) => (received: ReceivedRequest[]) => received.filter((r) => r.path === path);

    it("deliver each update with the payload and headers of the config's A2A version", async () => {
      const task = await submitTask(t, requester, worker);
      await pushConfig(task.id, '/push/v03', '0.3', {
        id: 'v03',
        token: 'tok-03',
        authentication: { schemes: ['Bearer'], credentials: 'sekret' },
      });
      await pushConfig(task.id, '/push/v1', '1.0', { id: 'v1', token: 'tok-1' });

      await reply(t, task.id, worker.key, { state: 'working', message: { parts: [text('On it.')] } }).expect(200);
      await reply(t, task.id, worker.key, {
        artifacts: [{ artifactId: 'report', parts: [text('Done: 42')], lastChunk: true }],
      }).expect(200);
      await reply(t, task.id, worker.key, { state: 'completed' }).expect(200);

      const v03 = at('/push/v03')(
        await receiver.waitFor((r) => at('/push/v03')(r).length >= 3 && at('/push/v1')(r).length >= 3),
      );
      const v1 = at('/push/v1')(receiver.received);
      await settle();
      expect(at('/push/v03')(receiver.received)).toHaveLength(3);
      expect(at('/push/v1')(receiver.received)).toHaveLength(3);

      // v0.3: the Task (as it is when sent), application/json, Authorization from the config's authentication and its token.
      for (const request of v03) {
        expect(request.headers).toMatchObject({
          'content-type': 'application/json',
          authorization: 'Bearer sekret',
          'x-a2a-notification-token': 'tok-03',
        });
        expect(JSON.parse(request.body)).toMatchObject({
          kind: 'task',
          id: task.id,
          contextId: task.contextId,
          status: { state: expect.any(String) },
        });
      }
      const finalV03 = await eventually(
        async () => v03.map((r) => JSON.parse(r.body)),
        (bodies) => bodies.some((b) => b.status.state === 'completed'),
      );
      expect(finalV03.find((b) => b.status.state === 'completed').artifacts).toEqual([
        expect.objectContaining({ artifactId: 'report', parts: [text('Done: 42')] }),
      ]);

      // v1.0: each update as a StreamResponse, application/a2a+json, the token, no Authorization (none configured).
      for (const request of v1) {
        expect(request.headers).toMatchObject({
          'content-type': 'application/a2a+json',
          'x-a2a-notification-token': 'tok-1',
        });
        expect(request.headers.authorization).toBeUndefined();
      }
      const bodies = v1.map((r) => JSON.parse(r.body));
      const statuses = bodies.filter((b) => b.statusUpdate).map((b) => b.statusUpdate);
      expect(statuses.map((s) => s.status.state).sort()).toEqual(['TASK_STATE_COMPLETED', 'TASK_STATE_WORKING']);
      expect(statuses.find((s) => s.status.state === 'TASK_STATE_WORKING')).toMatchObject({
        taskId: task.id,
        contextId: task.contextId,
        status: { message: { role: 'ROLE_AGENT', parts: [{ text: 'On it.' }] } },
      });
      expect(bodies.filter((b) => b.artifactUpdate).map((b) => b.artifactUpdate)).toEqual([
        expect.objectContaining({
          taskId: task.id,
          artifact: expect.objectContaining({ artifactId: 'report', parts: [{ text: 'Done: 42' }] }),
          lastChunk: true,
        }),
      ]);
    });

    it("a config that comes with the send gets the task's creation; a deleted config gets nothing more", async () => {
      const url = new URL('/push/from-send', receiver.url).href;
      const sent = await rpc(t, worker.handle, requester.key, 'message/send', {
        message: v03Message('with a config'),
        configuration: { blocking: false, pushNotificationConfig: { id: 'from-send', url } },
      }).expect(200);
      const taskId = sent.body.result.id;
      const [created] = at('/push/from-send')(await receiver.waitFor((r) => at('/push/from-send')(r).length >= 1));
      expect(JSON.parse(created.body)).toMatchObject({ kind: 'task', id: taskId });

      await rpc(t, worker.handle, requester.key, 'tasks/pushNotificationConfig/delete', {
        id: taskId,
        pushNotificationConfigId: 'from-send',
      }).expect(200);
      await reply(t, taskId, worker.key, { state: 'completed' }).expect(200);
      await settle();
      expect(at('/push/from-send')(receiver.received)).toHaveLength(1);
    });

    it("a deleted requester's configs get nothing more: neither new updates nor those already queued", async () => {
      const leaving = await enabledAgent(t, acme, { allowPublicEgress: true });
      const task = await submitTask(t, leaving, worker);
      const url = new URL('/push/owner-deleted', receiver.url).href;
      await rpc(t, worker.handle, leaving.key, 'tasks/pushNotificationConfig/set', {
        taskId: task.id,
        pushNotificationConfig: { id: 'c', url },
      }).expect(200);
      const dispatcher = t.app.get(DeliveryDispatcher);
      await dispatcher.stop(); // an update queued before the deletion stays queued
      try {
        await reply(t, task.id, worker.key, { state: 'working' }).expect(200);
        await t.http().delete(`/api/v1/identities/${leaving.handle}`).set(bearer(acme)).expect(204);
        await reply(t, task.id, worker.key, { state: 'completed' }).expect(200);
      } finally {
        dispatcher.start();
      }
      const [queued] = await eventually(
        () => t.db.query(`SELECT status, last_error FROM deliveries WHERE push_task_id = $1`, [task.id]),
        (rows: Array<{ status: string }>) => rows.length > 0 && rows.every((row) => row.status !== 'pending'),
      );
      expect(queued).toEqual({
        status: 'failed',
        last_error: 'not sent: the requester who set this config has been deleted',
      });
      // Only the update from before the deletion was queued at all.
      expect(await t.db.query(`SELECT count(*)::int AS n FROM deliveries WHERE push_task_id = $1`, [task.id])).toEqual([
        { n: 1 },
      ]);
      await settle();
      expect(at('/push/owner-deleted')(receiver.received)).toEqual([]);
    });

    it('are retried until the endpoint answers 2xx, every attempt logged', async () => {
      const task = await submitTask(t, requester, worker);
      await pushConfig(task.id, '/push/flaky', '1.0', { id: 'flaky' });
      let failures = 0;
      receiver.respond = ({ path }) => (path === '/push/flaky' && failures++ < 2 ? 503 : 200);
      await reply(t, task.id, worker.key, { state: 'completed' }).expect(200);
      await receiver.waitFor((r) => at('/push/flaky')(r).some((x) => x.status === 200));
      const [delivery] = await eventually(
        () =>
          t.db.query(
            `SELECT id, status, attempts FROM deliveries WHERE push_task_id = $1 AND push_config_id = 'flaky'`,
            [task.id],
          ),
        (rows: Array<{ id: string; status: string; attempts: number }>) =>
          rows.length === 1 && rows[0].status === 'succeeded',
      );
      expect(delivery.attempts).toBe(3);
      const log = await t.db.query(
        `SELECT attempt, succeeded, status_code FROM delivery_attempts WHERE delivery_id = $1 ORDER BY attempt`,
        [delivery.id],
      );
      expect(log).toEqual([
        { attempt: 1, succeeded: false, status_code: 503 },
        { attempt: 2, succeeded: false, status_code: 503 },
        { attempt: 3, succeeded: true, status_code: 200 },
      ]);
      expect(at('/push/flaky')(receiver.received).map((r) => r.status)).toEqual([503, 503, 200]);
    });
  });
});
