import { startApp, type TestApp } from '../support/app';
import { agentPair, openStream, reply, rpc, submitTask, v03Message, type Agent } from '../support/a2a';
import { statementsOf } from '../support/statements';

/**
 * A task journal's writes wait and go together: a worker's REST reply is the key, then
 * a transaction of the task's lock, one write (event, task row, outbox, notification)
 * and one read of the task's messages and artifacts for the answer. To a task the
 * instance remembers as it last committed it, that transaction is one round trip: the
 * lock (checking the task is still at the event remembered), the write, the read and
 * COMMIT go together. Otherwise two: BEGIN goes with the lock, which is read first.
 * A stream that starts a task sets its watch before the task is written, so it reads no
 * events until the task changes.
 */
describe('the task journal: writes in one statement', () => {
  let t: TestApp;
  /** A second instance on the same database: it remembers nothing of t's commits. */
  let other: TestApp;
  let requester: Agent;
  let worker: Agent;

  beforeAll(async () => {
    t = await startApp({ RATE_LIMIT_REST_PER_MINUTE: '100000', RATE_LIMIT_PROTOCOL_PER_MINUTE: '100000' });
    other = await startApp({ RATE_LIMIT_REST_PER_MINUTE: '100000', RATE_LIMIT_PROTOCOL_PER_MINUTE: '100000' }, t);
    ({ requester, worker } = await agentPair(t));
  });
  afterAll(async () => {
    await other.close();
    await t.close();
  });

  const eventsOf = async (taskId: string) =>
    (await t.db.query(`SELECT seq, state FROM task_events WHERE task_id = $1 ORDER BY seq`, [taskId])).map(
      (e: { seq: number; state: string }) => [e.seq, e.state],
    );

  it('a reply to a task this instance remembers: the key; the lock at the event remembered, the write, the read and COMMIT together', async () => {
    const task = await submitTask(t, requester, worker);
    let body: any;
    const sent = await statementsOf(async () => {
      body = (await reply(t, task.id, worker.key, { state: 'working' }).expect(200)).body;
    });
    expect(sent).toHaveLength(2);
    const [begin, lock, write, read, commit, ...more] = sent[1].split(';\n');
    expect(begin).toBe('BEGIN');
    expect(lock).toMatch(/^SELECT a2a_lock_task_at\(/);
    for (const change of ['INSERT INTO task_events ', 'UPDATE tasks SET', 'INSERT INTO events ']) {
      expect(write).toContain(change);
    }
    expect(read).toMatch(/^\s*WITH t AS \(/);
    expect([commit, more]).toEqual(['COMMIT', []]);
    expect(body).toMatchObject({ id: task.id, status: { state: 'working' } });
    expect(await eventsOf(task.id)).toEqual([
      [1, 'submitted'],
      [2, 'working'],
    ]);

    // It remembers its own reply as well; with a message, the message count is remembered too.
    const again = await statementsOf(async () => {
      body = (
        await reply(t, task.id, worker.key, { message: { parts: [{ kind: 'text', text: 'still on it' }] } }).expect(200)
      ).body;
    });
    expect(again).toHaveLength(2);
    expect(again[1]).toMatch(/^BEGIN;\nSELECT a2a_lock_task_at\([\s\S]*INSERT INTO messages[\s\S]*;\nCOMMIT$/);
    expect(again[1]).not.toMatch(/FROM messages WHERE task_id/);
    expect(body.history.map((m: { role: string }) => m.role)).toEqual(['user', 'agent']);
  });

  it('a task with metadata is remembered from its first change on (as jsonb keeps it), unless it is large', async () => {
    const withMetadata = async (metadata: Record<string, unknown>) =>
      (
        await rpc(t, worker.handle, requester.key, 'message/send', {
          message: v03Message('with metadata'),
          metadata,
          configuration: { blocking: false },
        }).expect(200)
      ).body.result.id as string;
    const small = await withMetadata({ project: 'atlas', at: 1 });
    let body: any;
    const first = await statementsOf(async () => {
      body = (await reply(t, small, worker.key, { state: 'working' }).expect(200)).body;
    });
    expect(first).toHaveLength(3); // its creation is not remembered: jsonb orders the keys its own way
    const sent = await statementsOf(async () => {
      body = (await reply(t, small, worker.key, { state: 'completed' }).expect(200)).body;
    });
    expect(sent).toHaveLength(2);
    expect(sent[1]).toMatch(/a2a_lock_task_at/);
    const [stored] = await t.db.query(`SELECT metadata::text AS text FROM tasks WHERE id = $1`, [small]);
    expect(JSON.stringify(body.metadata)).toBe(JSON.stringify(JSON.parse(stored.text)));

    const large = await withMetadata({ notes: 'n'.repeat(2000) });
    await reply(t, large, worker.key, { state: 'working' }).expect(200);
    const read = await statementsOf(async () => {
      body = (await reply(t, large, worker.key, { state: 'working' }).expect(200)).body;
    });
    expect(read).toHaveLength(3);
    expect(read[1]).toMatch(/FOR UPDATE/);
    expect(body.metadata).toEqual({ notes: 'n'.repeat(2000) });
  });

  it('a task that moved on since (another instance replied): the lock at the old event fails, the reply runs again with the lock read', async () => {
    const task = await submitTask(t, requester, worker);
    await reply(other, task.id, worker.key, { state: 'working' }).expect(200);
    let body: any;
    const sent = await statementsOf(async () => {
      body = (
        await reply(t, task.id, worker.key, {
          state: 'input-required',
          message: { parts: [{ kind: 'text', text: 'which one?' }] },
        }).expect(200)
      ).body;
    });
    expect(sent).toHaveLength(5);
    expect(sent[1]).toMatch(/^BEGIN;\nSELECT a2a_lock_task_at\([\s\S]*;\nCOMMIT$/);
    expect(sent[2]).toBe('ROLLBACK');
    expect(sent[3]).toMatch(/^BEGIN;\nSELECT .* FOR UPDATE;\n\s*SELECT ARRAY\(SELECT message_id FROM messages/s);
    expect(sent[4]).toMatch(/INSERT INTO messages[\s\S]*;\nCOMMIT$/);
    expect(body).toMatchObject({ status: { state: 'input-required', message: { parts: [{ text: 'which one?' }] } } });
    expect(await eventsOf(task.id)).toEqual([
      [1, 'submitted'],
      [2, 'working'],
      [3, 'input-required'],
    ]);
    const [row] = await t.db.query(`SELECT state, seq FROM tasks WHERE id = $1`, [task.id]);
    expect(row).toEqual({ state: 'input-required', seq: 3 });
  });

  it('a reply is refused for the task as it is, not as remembered', async () => {
    const task = await submitTask(t, requester, worker);
    await reply(t, task.id, worker.key, { state: 'working' }).expect(200); // t remembers it working
    await reply(other, task.id, worker.key, { state: 'completed' }).expect(200);
    const { body } = await reply(t, task.id, worker.key, { state: 'input-required' }).expect(409);
    expect(body.code).toBe('task_terminal');
    expect(await eventsOf(task.id)).toEqual([
      [1, 'submitted'],
      [2, 'working'],
      [3, 'completed'],
    ]);

    // What the task as remembered refuses is refused with the lock read, never from memory.
    const done = await submitTask(t, requester, worker);
    await reply(t, done.id, worker.key, { state: 'completed' }).expect(200); // t remembers it completed
    let refusal: any;
    const sent = await statementsOf(async () => {
      refusal = (await reply(t, done.id, worker.key, { state: 'working' }).expect(409)).body;
    });
    expect(refusal.code).toBe('task_terminal');
    expect(sent.some((text) => /a2a_lock_task_at/.test(text))).toBe(false);
    expect(sent.some((text) => /FOR UPDATE/.test(text))).toBe(true);
  });

  it('racing replies to a remembered task are each applied once, in order (those that lost the race run again with the lock)', async () => {
    const task = await submitTask(t, requester, worker);
    const text = (i: number) => ({ parts: [{ kind: 'text', text: `note ${i}` }] });
    const replies = await Promise.all(
      Array.from({ length: 8 }, (_, i) => reply(t, task.id, worker.key, { state: 'working', message: text(i) })),
    );
    expect(replies.map((r) => r.status)).toEqual(Array(8).fill(200));
    const events = await eventsOf(task.id);
    expect(events.map(([seq]: [number]) => seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const agentMessages = await t.db.query(
      `SELECT count(*)::int AS n FROM messages WHERE task_id = $1 AND role = 'agent'`,
      [task.id],
    );
    expect(agentMessages[0].n).toBe(8);
  });

  it('a reply to a task this instance does not remember: the key; BEGIN with the lock; the write, the usage, the read and COMMIT together', async () => {
    const task = await submitTask(t, requester, worker);
    let body: any;
    const sent = await statementsOf(async () => {
      body = (await reply(other, task.id, worker.key, { state: 'completed' }).expect(200)).body;
    });
    expect(sent).toHaveLength(3);
    const [begin, lock, ...none] = sent[1].split(';\n');
    expect([begin, none]).toEqual(['BEGIN', []]);
    expect(lock).toMatch(/FOR UPDATE/);
    const [write, measured, read, commit, ...more] = sent[2].split(';\n');
    for (const change of ['INSERT INTO task_events ', 'UPDATE tasks SET', 'INSERT INTO events ']) {
      expect(write).toContain(change);
    }
    // The task ended: measured and rolled up after the write, which it sees (docs/api.md §18).
    for (const change of ['INSERT INTO task_usage ', 'INSERT INTO usage_hourly ']) {
      expect(measured).toContain(change);
    }
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

  it("a reply with a message to a task this instance does not remember: the message limit's read goes with the lock", async () => {
    const task = await submitTask(t, requester, worker);
    let body: any;
    const sent = await statementsOf(async () => {
      body = (
        await reply(other, task.id, worker.key, {
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

  it('a send pays for budgets and trees only when it has them: the counter with a budget, the parent lookup with references', async () => {
    const pair = await agentPair(t);
    const send = (referenceTaskIds?: string[]) =>
      rpc(t, pair.worker.handle, pair.requester.key, 'message/send', {
        message: v03Message('plain', referenceTaskIds ? { referenceTaskIds } : {}),
        configuration: { blocking: false },
      }).expect(200);
    const writeOf = async (work: () => Promise<unknown>) =>
      (await statementsOf(work)).find((text) => text.includes('INSERT INTO tasks'))!;
    const plain = await writeOf(() => send());
    expect(plain).not.toContain('usage_counters');
    expect(plain).not.toContain('jsonb_array_elements_text');
    const parent = (await send()).body.result.id as string;
    expect(await writeOf(() => send([parent]))).toContain('jsonb_array_elements_text');
    await t.db.query(`UPDATE identities SET daily_task_quota = 100 WHERE id = $1`, [pair.requester.id]);
    expect(await writeOf(() => send())).toContain('INSERT INTO usage_counters');
    const [counter] = await t.db.query(`SELECT tasks FROM usage_counters WHERE identity_id = $1 AND period = 'day'`, [
      pair.requester.id,
    ]);
    expect(counter).toEqual({ tasks: 1 });
  });
});
