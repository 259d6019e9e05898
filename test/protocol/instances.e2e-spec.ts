import { TaskNotifier } from '../../src/events/task-notifier';
import { LedgerService } from '../../src/ledger/ledger.service';
import { startApp, type TestApp } from '../support/app';
import { agentPair, openStream, reply, rpc, startBlocking, submitTask, v03Message, type Agent } from '../support/a2a';

/**
 * Two instances of the service on one database: a change made through one wakes
 * the streams and blocking sends held by the other (PostgreSQL LISTEN/NOTIFY).
 */
describe('two instances on one database', () => {
  let a: TestApp;
  let b: TestApp;
  let requester: Agent;
  let worker: Agent;

  beforeAll(async () => {
    a = await startApp();
    b = await startApp({}, a);
    ({ requester, worker } = await agentPair(a));
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  it('a reply through B wakes a stream held by A', async () => {
    const task = await submitTask(a, requester, worker);
    const stream = await openStream(a.baseUrl, worker.handle, requester.key, 'tasks/resubscribe', { id: task.id });
    expect((await stream.next())!.body.result).toMatchObject({ id: task.id, status: { state: 'submitted' } });
    await reply(b, task.id, worker.key, {
      state: 'working',
      message: { parts: [{ kind: 'text', text: 'via B' }] },
    }).expect(200);
    expect((await stream.next())!.body.result).toMatchObject({
      kind: 'status-update',
      status: { state: 'working', message: { parts: [{ kind: 'text', text: 'via B' }] } },
    });
    await reply(b, task.id, worker.key, { state: 'completed' }).expect(200);
    expect((await stream.rest()).map((e) => e.result.status.state)).toEqual(['completed']);
  });

  it('a stream takes what its own instance committed as it was written, and reads what the other committed', async () => {
    // A's wake-ups wait until a reply has been answered and its change announced to A, so that
    // A's own commit has handed its events to A's watches first (it always has by its answer).
    const notifier = a.app.get(TaskNotifier) as unknown as { wake: (key: string, ...rest: unknown[]) => void };
    const wake = notifier.wake.bind(notifier);
    const held: Array<Parameters<typeof wake>> = [];
    notifier.wake = (...args) => void held.push(args);
    const release = () => held.splice(0).forEach((args) => wake(...args));
    // The reply's own announcement (not the late wake-up of an earlier commit of A's: task-notifier.ts).
    const announced = async (taskId: string) => {
      while (!held.some(([key, , channel]) => key === taskId && channel === true)) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      release();
    };
    const reads = jest.spyOn(a.app.get(LedgerService), 'events');
    const text = (value: string) => ({ parts: [{ kind: 'text', text: value }] });
    try {
      const task = await submitTask(a, requester, worker);
      const stream = await openStream(a.baseUrl, worker.handle, requester.key, 'tasks/resubscribe', { id: task.id });
      expect((await stream.next())!.body.result).toMatchObject({ id: task.id, status: { state: 'submitted' } });

      await reply(a, task.id, worker.key, { state: 'working', message: text('on A') }).expect(200);
      await announced(task.id);
      expect((await stream.next())!.body.result).toMatchObject({
        kind: 'status-update',
        status: { state: 'working', message: { role: 'agent', parts: [{ kind: 'text', text: 'on A' }] } },
      });
      expect(reads).toHaveBeenCalledTimes(1); // the subscription's catch-up after the task, nothing since

      await reply(b, task.id, worker.key, {
        artifacts: [{ artifactId: 'r', name: 'r.md', parts: [{ kind: 'text', text: 'B' }] }],
      }).expect(200);
      await announced(task.id);
      expect((await stream.next())!.body.result).toMatchObject({ kind: 'artifact-update', artifact: { name: 'r.md' } });
      expect(reads).toHaveBeenCalledTimes(2); // committed on B: read

      await reply(a, task.id, worker.key, {
        artifacts: [{ artifactId: 'r', append: true, lastChunk: true, parts: [{ kind: 'text', text: 'A' }] }],
        state: 'completed',
      }).expect(200);
      await announced(task.id);
      expect((await stream.rest()).map((e) => e.result)).toEqual([
        expect.objectContaining({
          kind: 'artifact-update',
          append: true,
          artifact: { artifactId: 'r', name: 'r.md', parts: [{ kind: 'text', text: 'A' }] },
        }),
        expect.objectContaining({
          kind: 'status-update',
          final: true,
          status: expect.objectContaining({ state: 'completed' }),
        }),
      ]);
      expect(reads).toHaveBeenCalledTimes(2);
    } finally {
      notifier.wake = wake;
      release();
      reads.mockRestore();
    }
  });

  it("a stream reads back nothing its own instance commits, whether the change's notification or the commit's answer comes first", async () => {
    // The notification often comes first (TaskWatch.expect): the stream then waits for the commit's hand-over.
    const reads = jest.spyOn(a.app.get(LedgerService), 'events');
    try {
      for (let turn = 0; turn < 20; turn++) {
        const stream = await openStream(a.baseUrl, worker.handle, requester.key, 'message/stream', {
          message: v03Message(`turn ${turn}`),
        });
        const task = (await stream.next())!.body.result as { id: string };
        await reply(a, task.id, worker.key, { state: 'completed' }).expect(200);
        expect((await stream.rest()).map((e) => e.result.status.state)).toEqual(['completed']);
      }
      expect(reads).not.toHaveBeenCalled();
    } finally {
      reads.mockRestore();
    }
  });

  it('a reply through A wakes a blocking send held by B', async () => {
    const sent = await startBlocking(b, worker, () =>
      rpc(b, worker.handle, requester.key, 'message/send', { message: v03Message('block on B') }),
    );
    await reply(a, sent.taskId, worker.key, { state: 'completed' }).expect(200);
    expect((await sent.response).body.result).toMatchObject({ id: sent.taskId, status: { state: 'completed' } });
  });

  it('a cancel through A ends a v1.0 stream held by B', async () => {
    const task = await submitTask(a, requester, worker);
    const stream = await openStream(b.baseUrl, worker.handle, requester.key, 'SubscribeToTask', { id: task.id }, '1.0');
    await stream.next();
    await rpc(a, worker.handle, requester.key, 'tasks/cancel', { id: task.id }).expect(200);
    expect((await stream.rest()).map((e) => e.result.statusUpdate.status.state)).toEqual(['TASK_STATE_CANCELED']);
  });

  it('survives the loss of its listening connection: streams still wake', async () => {
    const task = await submitTask(a, requester, worker);
    const stream = await openStream(a.baseUrl, worker.handle, requester.key, 'tasks/resubscribe', { id: task.id });
    await stream.next();
    const listeners = () =>
      b.db.query(
        `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'a2a-service-listener'`,
      ) as Promise<Array<{ pid: number }>>;
    const before = await listeners();
    expect(before).toHaveLength(2); // one listener per instance
    await b.db.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = ANY($1::int[])`, [
      before.map((l) => l.pid),
    ]);
    await reply(b, task.id, worker.key, { state: 'completed' }).expect(200);
    expect((await stream.rest(20_000)).map((e) => e.result.status.state)).toEqual(['completed']);
    // Both listeners reconnected, on new connections.
    for (let i = 0; i < 100 && (await listeners()).length < 2; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const after = await listeners();
    expect(after).toHaveLength(2);
    expect(after.filter((l) => before.some((old) => old.pid === l.pid))).toEqual([]);
  });
});
