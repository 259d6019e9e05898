import { startApp, type TestApp } from '../support/app';
import { agentPair, openStream, reply, rpc, submitTask, v03Message, v1Message, type Agent } from '../support/a2a';
import { mintAgentKey, type ConsoleAccount } from '../support/fixtures';

/** PROTOCOL_MAX_OPEN_CALLS_PER_KEY: streams and blocking sends open per API key, on one instance. */
describe('protocol: open calls per key', () => {
  let t: TestApp;
  let acme: ConsoleAccount;
  let requester: Agent;
  let worker: Agent;

  beforeAll(async () => {
    t = await startApp({ PROTOCOL_MAX_OPEN_CALLS_PER_KEY: '2' });
    ({ acme, requester, worker } = await agentPair(t));
  });
  afterAll(() => t.close());

  const subscribe = (key: string, taskId: string) =>
    openStream(t.baseUrl, worker.handle, key, 'SubscribeToTask', { id: taskId }, '1.0');
  const expectTooMany = (res: { status: number; body: any }) => {
    expect(res.status).toBe(429);
    expect(res.body).toEqual({
      jsonrpc: '2.0',
      id: expect.any(Number),
      error: {
        code: -32000,
        message: expect.stringContaining('2 streams and blocking sends'),
        data: { reason: 'too_many_open_calls', status: 429, request_id: expect.any(String) },
      },
    });
  };
  const taskCount = async () =>
    (
      (await t.db.query(`SELECT count(*)::int AS count FROM tasks WHERE requester_identity_id = $1`, [
        requester.id,
      ])) as Array<{ count: number }>
    )[0].count;

  it('beyond the cap, streams and blocking sends → 429 too_many_open_calls; other calls and other keys go on', async () => {
    const task = await submitTask(t, requester, worker);
    const open = [await subscribe(requester.key, task.id), await subscribe(requester.key, task.id)];
    for (const stream of open) {
      expect((await stream.next())!.body.result.task.id).toBe(task.id);
    }

    const before = await taskCount();
    expectTooMany(await rpc(t, worker.handle, requester.key, 'SubscribeToTask', { id: task.id }, '1.0'));
    expectTooMany(await rpc(t, worker.handle, requester.key, 'message/stream', { message: v03Message('x') }));
    expectTooMany(await rpc(t, worker.handle, requester.key, 'SendMessage', { message: v1Message('blocks') }, '1.0'));
    expectTooMany(await rpc(t, worker.handle, requester.key, 'message/send', { message: v03Message('blocks') }));
    expect(await taskCount()).toBe(before); // refused before the method ran

    // Calls that return at once are not counted.
    await rpc(t, worker.handle, requester.key, 'message/send', {
      message: v03Message('x'),
      configuration: { blocking: false },
    }).expect(200);
    await rpc(
      t,
      worker.handle,
      requester.key,
      'SendMessage',
      { message: v1Message('x'), configuration: { returnImmediately: true } },
      '1.0',
    ).expect(200);
    expect(
      (await rpc(t, worker.handle, requester.key, 'GetTask', { id: task.id }, '1.0').expect(200)).body.result.id,
    ).toBe(task.id);

    // The cap is per key: the same identity's other key has its own.
    const second = await mintAgentKey(t, acme, requester.id);
    const other = await subscribe(second, task.id);
    expect(other.response.status).toBe(200);
    expect((await other.next())!.body.result.task.id).toBe(task.id);

    // Streams that end give their slots back.
    await reply(t, task.id, worker.key, { state: 'completed' }).expect(200);
    for (const stream of [...open, other]) {
      expect((await stream.rest()).map((e) => e.result.statusUpdate.status.state)).toEqual(['TASK_STATE_COMPLETED']);
    }
    const next = await submitTask(t, requester, worker);
    const reopened = [await subscribe(requester.key, next.id), await subscribe(requester.key, next.id)];
    for (const stream of reopened) {
      expect(stream.response.status).toBe(200);
    }
    reopened.forEach((stream) => stream.close());
  });

  it('a client that goes away gives its slot back', async () => {
    const task = await submitTask(t, requester, worker);
    const held = await subscribe(requester.key, task.id);
    const dropped = await subscribe(requester.key, task.id);
    await held.next();
    await dropped.next();
    expectTooMany(await rpc(t, worker.handle, requester.key, 'SubscribeToTask', { id: task.id }, '1.0'));
    dropped.close();
    // The server notices the closed connection on its own time: try until the slot is free.
    let retry = await subscribe(requester.key, task.id);
    for (let i = 0; i < 100 && retry.response.status === 429; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      retry = await subscribe(requester.key, task.id);
    }
    expect(retry.response.status).toBe(200);
    expect((await retry.next())!.body.result.task.id).toBe(task.id);
    retry.close();
    held.close();
  });
});
