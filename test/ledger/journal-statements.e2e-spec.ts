import { startApp, type TestApp } from '../support/app';
import { agentPair, openStream, reply, submitTask, v03Message, type Agent } from '../support/a2a';
import { statementsOf } from '../support/statements';

/**
 * A task journal's writes wait and go together: a worker's REST reply is the key, then
 * a transaction of the task's lock, one write (event, task row, outbox, notification)
 * and one read of the task's messages and artifacts for the answer — in two round
 * trips after the key, as BEGIN goes with the lock, and the write, the read and
 * COMMIT go together. A stream that
 * starts a task sets its watch before the task is written, so it reads no events
 * until the task changes.
 */
describe('the task journal: writes in one statement', () => {
  let t: TestApp;
  let requester: Agent;
  let worker: Agent;

  beforeAll(async () => {
    t = await startApp({ RATE_LIMIT_REST_PER_MINUTE: '100000', RATE_LIMIT_PROTOCOL_PER_MINUTE: '100000' });
    ({ requester, worker } = await agentPair(t));
  });
  afterAll(() => t.close());

  it('a reply: the key; BEGIN with the lock; the write, the read and COMMIT together', async () => {
    const task = await submitTask(t, requester, worker);
    let body: any;
    const sent = await statementsOf(async () => {
      body = (await reply(t, task.id, worker.key, { state: 'completed' }).expect(200)).body;
    });
    expect(sent).toHaveLength(3);
    const [begin, lock, ...none] = sent[1].split(';\n');
    expect([begin, none]).toEqual(['BEGIN', []]);
    expect(lock).toMatch(/FOR UPDATE/);
    const [write, read, commit, ...more] = sent[2].split(';\n');
    for (const change of ['INSERT INTO task_events ', 'UPDATE tasks SET', 'INSERT INTO events '])
      expect(write).toContain(change);
    expect(read).toMatch(/^\s*WITH t AS \(/); // the task's messages and artifacts, for the answer
    expect([commit, more]).toEqual(['COMMIT', []]);

    const [row] = await t.db.query(`SELECT state, seq, status_timestamp, updated_at FROM tasks WHERE id = $1`, [
      task.id,
    ]);
    expect(row).toMatchObject({ state: 'completed', seq: 2 });
    expect(body.status).toMatchObject({ state: 'completed', timestamp: row.status_timestamp.toISOString() });
    const events = await t.db.query(
      `SELECT seq, kind, state, created_at FROM task_events WHERE task_id = $1 ORDER BY seq`,
      [task.id],
    );
    expect(events.map((e: { seq: number; state: string }) => [e.seq, e.state])).toEqual([
      [1, 'submitted'],
      [2, 'completed'],
    ]);
    expect(events[1].created_at.toISOString()).toBe(row.status_timestamp.toISOString());
    const outbox = await t.db.query(`SELECT data FROM events WHERE type = 'task.status' AND data->'task'->>'id' = $1`, [
      task.id,
    ]);
    expect(outbox).toHaveLength(1);
    expect(outbox[0].data).toMatchObject({ seq: 2, task: { id: task.id, status: { state: 'completed' } } });
  });

  it("a reply with a message: the message limit's read goes with the lock", async () => {
    const task = await submitTask(t, requester, worker);
    let body: any;
    const sent = await statementsOf(async () => {
      body = (
        await reply(t, task.id, worker.key, {
          state: 'completed',
          message: { parts: [{ kind: 'text', text: 'done' }] },
        }).expect(200)
      ).body;
    });
    expect(sent).toHaveLength(3);
    const [begin, lock, room, ...none] = sent[1].split(';\n');
    expect([begin, none]).toEqual(['BEGIN', []]);
    expect(lock).toMatch(/FOR UPDATE/);
    expect(room).toMatch(/FROM messages WHERE task_id/);
    expect(sent[2]).toMatch(/INSERT INTO messages[\s\S]*;\n\s*WITH t AS \([\s\S]*;\nCOMMIT$/);
    expect(body.status.message.parts).toEqual([{ kind: 'text', text: 'done' }]);
    expect(body.history.map((m: { role: string }) => m.role)).toEqual(['user', 'agent']);
  });

  it('a reply with artifacts and a message: every write numbered in order, the answer holds them', async () => {
    const task = await submitTask(t, requester, worker);
    const { body } = await reply(t, task.id, worker.key, {
      state: 'completed',
      message: { parts: [{ kind: 'text', text: 'done' }] },
      artifacts: [
        { artifactId: 'a', name: 'first', parts: [{ kind: 'text', text: 'one' }] },
        { artifactId: 'a', append: true, parts: [{ kind: 'text', text: 'two' }], lastChunk: true },
        { artifactId: 'b', parts: [{ kind: 'text', text: 'three' }] },
      ],
    }).expect(200);
    const events = await t.db.query(`SELECT seq, kind, state FROM task_events WHERE task_id = $1 ORDER BY seq`, [
      task.id,
    ]);
    expect(events).toEqual([
      { seq: 1, kind: 'status', state: 'submitted' },
      { seq: 2, kind: 'artifact', state: 'submitted' },
      { seq: 3, kind: 'artifact', state: 'submitted' },
      { seq: 4, kind: 'artifact', state: 'submitted' },
      { seq: 5, kind: 'status', state: 'completed' },
    ]);
    const [row] = await t.db.query(
      `SELECT t.seq, m.message_id FROM tasks t JOIN messages m ON m.id = t.status_message_id WHERE t.id = $1`,
      [task.id],
    );
    expect(row.seq).toBe(5);
    expect(body.status.message.parts).toEqual([{ kind: 'text', text: 'done' }]);
    expect(body.history.map((m: { role: string }) => m.role)).toEqual(['user', 'agent']);
    expect(body.artifacts).toEqual([
      expect.objectContaining({
        artifactId: 'a',
        name: 'first',
        parts: [
          { kind: 'text', text: 'one' },
          { kind: 'text', text: 'two' },
        ],
      }),
      expect.objectContaining({ artifactId: 'b', parts: [{ kind: 'text', text: 'three' }] }),
    ]);
  });

  it('a stream that starts a task reads no events before the task changes, and sees the reply', async () => {
    let stream!: Awaited<ReturnType<typeof openStream>>;
    let taskId = '';
    const sent = await statementsOf(async () => {
      stream = await openStream(t.baseUrl, worker.handle, requester.key, 'message/stream', {
        message: v03Message('watch me'),
      });
      taskId = (await stream.next())!.body.result.id;
    });
    // The key and the one write — and the parties with their rules, unless this pair was
    // read at admission's version already (by the calls above): nothing reads the new task's events.
    expect(sent.filter((text) => !/^WITH asked AS/.test(text))).toHaveLength(2);
    expect(sent.some((text) => /FROM task_events/.test(text))).toBe(false);
    await reply(t, taskId, worker.key, { state: 'completed' }).expect(200);
    const update = (await stream.next())!.body.result;
    expect(update).toMatchObject({ kind: 'status-update', taskId, final: true, status: { state: 'completed' } });
    expect(await stream.next()).toBeNull();
  });
});
