import { randomUUID } from 'node:crypto';
import { startApp, type TestApp } from '../support/app';
import { agentPair, reply, rpc, v03Message, type Agent } from '../support/a2a';
import { signup } from '../support/fixtures';
import { statementsOf } from '../support/statements';

/**
 * A send that starts a task is one statement (LedgerService.start, a write batch): the
 * key, the call's parties and rules, then the write — three round trips, no BEGIN or
 * COMMIT — and all of it or nothing is written.
 */
describe('a send that starts a task: one statement', () => {
  let t: TestApp;
  let requester: Agent;
  let worker: Agent;

  beforeAll(async () => {
    t = await startApp({ RATE_LIMIT_PROTOCOL_PER_MINUTE: '100000' });
    ({ requester, worker } = await agentPair(t));
  });
  afterAll(() => t.close());

  const counts = async () =>
    (
      (await t.db.query(
        `SELECT (SELECT count(*) FROM tasks)::int AS tasks, (SELECT count(*) FROM contexts)::int AS contexts,
                (SELECT count(*) FROM messages)::int AS messages, (SELECT count(*) FROM task_events)::int AS task_events,
                (SELECT count(*) FROM events)::int AS events`,
      )) as Array<Record<string, number>>
    )[0];

  it('takes three round trips: the key, the parties with their rules, and one write without BEGIN/COMMIT', async () => {
    const sent = await statementsOf(() =>
      rpc(t, worker.handle, requester.key, 'message/send', {
        message: v03Message('one statement'),
        configuration: { blocking: false },
      }).expect(200),
    );
    expect(sent.map((text) => text.trim().slice(0, 60))).toHaveLength(3);
    expect(sent.some((text) => /^\s*(BEGIN|START TRANSACTION|COMMIT)/i.test(text))).toBe(false);
    const write = sent[2];
    for (const table of ['contexts', 'tasks', 'messages', 'task_events', 'events', 'deliveries', 'upstream_forwards']) {
      expect(write).toMatch(new RegExp(`INSERT INTO ${table}\\s`));
    }
  });

  it('writes the task, its context, message and event, and the outbox event as the transactional path did', async () => {
    const res = await rpc(t, worker.handle, requester.key, 'message/send', {
      message: v03Message('look at me', { metadata: { k: 'v' } }),
      metadata: { request: 1 },
      configuration: { blocking: false },
    }).expect(200);
    const { id, contextId, status } = res.body.result as {
      id: string;
      contextId: string;
      status: { timestamp: string };
    };
    const [task] = await t.db.query(`SELECT * FROM tasks WHERE id = $1`, [id]);
    expect(task).toMatchObject({ context_id: contextId, state: 'submitted', seq: 1, status_message_id: null });
    expect(task.metadata).toEqual({ request: 1 });
    expect(new Date(task.status_timestamp as string).toISOString()).toBe(status.timestamp);
    const [message] = await t.db.query(`SELECT * FROM messages WHERE task_id = $1`, [id]);
    expect(message).toMatchObject({ role: 'user', seq: 1, metadata: { k: 'v' } });
    const events = await t.db.query(`SELECT seq, kind, state, message_id FROM task_events WHERE task_id = $1`, [id]);
    expect(events).toEqual([{ seq: 1, kind: 'status', state: 'submitted', message_id: message.id }]);
    const outbox = await t.db.query(
      `SELECT type, data FROM events WHERE type = 'task.created' AND data->'task'->>'id' = $1`,
      [id],
    );
    expect(outbox).toHaveLength(1);
    expect(outbox[0].data).toMatchObject({
      seq: 1,
      task: { id, contextId, status: { state: 'submitted', timestamp: status.timestamp } },
      message: { messageId: message.message_id, taskId: id, contextId, created_at: status.timestamp },
    });
    const [context] = await t.db.query(`SELECT * FROM contexts WHERE id = $1`, [contextId]);
    expect(context).toMatchObject({ requester_identity_id: requester.id, worker_identity_id: worker.id });
  });

  it('numbers the task, its context and its messages with ids that follow time (UUID version 7), on every path', async () => {
    const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    const millis = (id: string) => parseInt(id.replace(/-/g, '').slice(0, 12), 16);
    const before = Date.now();
    // The one-statement path, the transaction's (a send carrying a push notification config), and the journal's (a reply).
    const started = await rpc(t, worker.handle, requester.key, 'message/send', {
      message: v03Message('batch path'),
      configuration: { blocking: false },
    }).expect(200);
    const inTransaction = await rpc(t, worker.handle, requester.key, 'message/send', {
      message: v03Message('transaction path'),
      configuration: { blocking: false, pushNotificationConfig: { url: 'https://hooks.example.test/a2a' } },
    }).expect(200);
    const taskIds = [started.body.result.id as string, inTransaction.body.result.id as string];
    await reply(t, taskIds[0], worker.key, {
      state: 'input-required',
      message: { parts: [{ kind: 'text', text: 'the journal path' }] },
    }).expect(200);
    const after = Date.now();
    const rows = (await t.db.query(
      `SELECT t.id, t.context_id, array_agg(m.id::text ORDER BY m.seq) AS messages
         FROM tasks t JOIN messages m ON m.task_id = t.id WHERE t.id = ANY($1::uuid[]) GROUP BY t.id, t.context_id`,
      [taskIds],
    )) as Array<{ id: string; context_id: string; messages: string[] }>;
    expect(rows).toHaveLength(2);
    const ids = rows.flatMap((row) => [row.id, row.context_id, ...row.messages]);
    expect(ids).toHaveLength(7); // two tasks, two contexts, three messages
    for (const id of ids) {
      expect(id).toMatch(V7);
      expect(millis(id)).toBeGreaterThanOrEqual(before);
      expect(millis(id)).toBeLessThanOrEqual(after);
    }
  });

  it("a context of another pair fails the whole statement: nothing is written, and the caller is told it's not found", async () => {
    const other = await agentPair(t, await signup(t, 'Other'));
    const theirs = await rpc(t, other.worker.handle, other.requester.key, 'message/send', {
      message: v03Message('theirs'),
      configuration: { blocking: false },
    }).expect(200);
    const before = await counts();
    const res = await rpc(t, worker.handle, requester.key, 'message/send', {
      message: v03Message('into their context', { contextId: theirs.body.result.contextId }),
      configuration: { blocking: false },
    }).expect(200);
    expect(res.body.error).toMatchObject({ code: -32602 });
    expect(await counts()).toEqual(before);
    const unknown = await rpc(t, worker.handle, requester.key, 'message/send', {
      message: v03Message('into no context', { contextId: randomUUID() }),
      configuration: { blocking: false },
    }).expect(200);
    expect(unknown.body.error).toMatchObject({ code: -32602 });
    expect(await counts()).toEqual(before);
  });

  it('a retried send writes nothing and answers with the task it created', async () => {
    const message = v03Message('retry me');
    const first = await rpc(t, worker.handle, requester.key, 'message/send', {
      message,
      configuration: { blocking: false },
    }).expect(200);
    const before = await counts();
    const again = await rpc(t, worker.handle, requester.key, 'message/send', {
      message,
      configuration: { blocking: false },
    }).expect(200);
    expect(again.body.result.id).toBe(first.body.result.id);
    expect(again.body.result.contextId).toBe(first.body.result.contextId);
    expect(await counts()).toEqual(before);
  });

  const write = (text: string) => text.startsWith('WITH w0 AS (INSERT INTO contexts');
  const send = (message = v03Message('together')) =>
    rpc(t, worker.handle, requester.key, 'message/send', { message, configuration: { blocking: false } }).expect(200);

  it('sends that arrive together go as fewer statements (group commit), each task written whole', async () => {
    const before = await counts();
    let answers: Array<{ body: { result: { id: string } } }> = [];
    const sent = await statementsOf(async () => {
      answers = await Promise.all(Array.from({ length: 20 }, () => send()));
    });
    const writes = sent.filter(write);
    expect(writes.length).toBeGreaterThan(0);
    expect(writes.length).toBeLessThan(20);
    // Each statement inserts its sends' rows with one INSERT a table, however many went together.
    for (const text of writes) {
      for (const table of ['contexts', 'tasks', 'messages', 'task_events', 'events']) {
        expect(text.split(new RegExp(`INSERT INTO ${table}\\s`))).toHaveLength(2);
      }
    }
    const ids = answers.map((answer) => answer.body.result.id);
    expect(new Set(ids).size).toBe(20);
    const after = await counts();
    for (const table of ['tasks', 'contexts', 'messages', 'task_events', 'events'] as const) {
      expect(after[table] - before[table]).toBe(20);
    }
    const rows = await t.db.query(
      `SELECT t.id FROM tasks t JOIN messages m ON m.task_id = t.id JOIN task_events e ON e.task_id = t.id AND e.message_id = m.id
        WHERE t.id = ANY($1::uuid[])`,
      [ids],
    );
    expect(rows).toHaveLength(20);
  });

  it('a retry among sends that go together is answered with its task; the others are written', async () => {
    const retried = v03Message('sent before');
    const first = await send(retried);
    const before = await counts();
    const answers = await Promise.all([
      ...Array.from({ length: 8 }, () => send()),
      send(retried),
      ...Array.from({ length: 8 }, () => send()),
    ]);
    expect(answers[8].body.result.id).toBe(first.body.result.id);
    const created = answers.filter((_, i) => i !== 8).map((answer) => answer.body.result.id);
    expect(new Set(created).size).toBe(16);
    expect(created).not.toContain(first.body.result.id);
    const after = await counts();
    expect(after.tasks - before.tasks).toBe(16);
    expect(after.messages - before.messages).toBe(16);
  });

  it('a send PostgreSQL refuses among sends that go together fails alone', async () => {
    // A value only PostgreSQL refuses: the body checks let no such value through any
    // more, so a trigger of this test's database stands in for one (a data exception).
    await t.db.query(`
      CREATE FUNCTION refuse_marked_message() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.parts::text LIKE '%refused by postgresql%' THEN
          RAISE EXCEPTION 'refused' USING ERRCODE = '22023';
        END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER refuse_marked_message BEFORE INSERT ON messages
        FOR EACH ROW EXECUTE FUNCTION refuse_marked_message();`);
    try {
      const before = await counts();
      const refused = rpc(t, worker.handle, requester.key, 'message/send', {
        message: v03Message('refused by postgresql'),
        configuration: { blocking: false },
      });
      const answers = await Promise.all([
        ...Array.from({ length: 6 }, () => send()),
        refused,
        ...Array.from({ length: 6 }, () => send()),
      ]);
      expect(answers[6].body.error).toMatchObject({ code: -32602 });
      expect(answers.filter((_, i) => i !== 6).every((answer) => answer.body.result?.id)).toBe(true);
      expect((await counts()).tasks - before.tasks).toBe(12);
    } finally {
      await t.db.query(`DROP TRIGGER refuse_marked_message ON messages; DROP FUNCTION refuse_marked_message()`);
    }
  });
});
