import { startApp, type TestApp } from '../support/app';
import { agentPair, openStream, reply, rpc, submitTask, v03Message, type Agent } from '../support/a2a';

const TERMINAL = new Set(['completed', 'failed', 'canceled', 'rejected']);

/** Replies race each other, and the requester: nothing is lost, no transition is illegal. */
describe('concurrent changes to one task', () => {
  let t: TestApp;
  let requester: Agent;
  let worker: Agent;

  beforeAll(async () => {
    t = await startApp({ RATE_LIMIT_REST_PER_MINUTE: '100000', RATE_LIMIT_PROTOCOL_PER_MINUTE: '100000' });
    ({ requester, worker } = await agentPair(t));
  });
  afterAll(() => t.close());

  const events = (taskId: string) =>
    t.db.query(`SELECT seq, kind, state FROM task_events WHERE task_id = $1 ORDER BY seq`, [taskId]) as Promise<
      Array<{ seq: number; kind: string; state: string }>
    >;

  it('40 racing replies (two of them completing): each is applied whole or refused whole', async () => {
    const task = await submitTask(t, requester, worker);
    const N = 40;
    const results = await Promise.all(
      Array.from({ length: N }, (_, i) =>
        reply(t, task.id, worker.key, {
          state: i === 10 || i === 25 ? 'completed' : 'working',
          message: { parts: [{ kind: 'text', text: `r${i}` }] },
          artifacts: [{ artifactId: `a${i}`, parts: [{ kind: 'text', text: `a${i}` }] }],
        }),
      ),
    );

    for (const res of results) {
      expect([200, 409]).toContain(res.status);
      if (res.status === 409) {
        expect(res.body.code).toBe('task_terminal');
      }
    }
    const applied = results
      .map((res, i) => [res.status === 200, i] as const)
      .filter(([ok]) => ok)
      .map(([, i]) => i);
    const messages = (await t.db.query(
      `SELECT m.parts->0->>'text' AS text FROM messages m WHERE m.task_id = $1 AND m.role = 'agent'`,
      [task.id],
    )) as Array<{ text: string }>;
    const artifacts = (await t.db.query(`SELECT artifact_id FROM artifacts WHERE task_id = $1`, [task.id])) as Array<{
      artifact_id: string;
    }>;
    expect(messages.map((m) => m.text).sort()).toEqual(applied.map((i) => `r${i}`).sort());
    expect(artifacts.map((a) => a.artifact_id).sort()).toEqual(applied.map((i) => `a${i}`).sort());

    const log = await events(task.id);
    expect(log.map((e) => e.seq)).toEqual(log.map((_, i) => i + 1)); // numbered without gaps or repeats
    const terminalAt = log.findIndex((e) => TERMINAL.has(e.state));
    expect(terminalAt).toBe(log.length - 1); // nothing after the task ended
    expect(log.filter((e) => e.kind === 'status' && e.state === 'completed')).toHaveLength(1);
    expect(log).toHaveLength(1 + applied.length * 2); // the creation, then an artifact and a status per applied reply
    const [{ state, seq }] = await t.db.query(`SELECT state, seq FROM tasks WHERE id = $1`, [task.id]);
    expect({ state, seq }).toEqual({ state: 'completed', seq: log.length });
  });

  it('30 racing appends to one artifact keep every chunk, in event order', async () => {
    const task = await submitTask(t, requester, worker);
    await reply(t, task.id, worker.key, {
      artifacts: [{ artifactId: 'log', parts: [{ kind: 'text', text: 'start' }] }],
    }).expect(200);
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        reply(t, task.id, worker.key, {
          artifacts: [{ artifactId: 'log', append: true, parts: [{ kind: 'text', text: `line ${i}` }] }],
        }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(30).fill(200));
    const chunks = (await t.db.query(
      `SELECT artifact->'parts'->0->>'text' AS text FROM task_events WHERE task_id = $1 AND kind = 'artifact' ORDER BY seq`,
      [task.id],
    )) as Array<{ text: string }>;
    const [artifact] = (await t.db.query(`SELECT parts FROM artifacts WHERE task_id = $1 AND artifact_id = 'log'`, [
      task.id,
    ])) as Array<{ parts: Array<{ text: string }> }>;
    expect(artifact.parts.map((p) => p.text)).toEqual(chunks.map((c) => c.text));
    expect(artifact.parts).toHaveLength(31);
  });

  it('a stream open during racing replies sees every update once, in order', async () => {
    const task = await submitTask(t, requester, worker);
    const stream = await openStream(t.baseUrl, worker.handle, requester.key, 'tasks/resubscribe', { id: task.id });
    await stream.next();
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        reply(t, task.id, worker.key, { message: { parts: [{ kind: 'text', text: `${i}` }] } }).expect(200),
      ),
    );
    await reply(t, task.id, worker.key, { state: 'completed' }).expect(200);
    const seen = (await stream.rest()).map((e) => e.result);
    const stored = (await t.db.query(
      `SELECT m.parts->0->>'text' AS text FROM task_events e JOIN messages m ON m.id = e.message_id WHERE e.task_id = $1 AND m.role = 'agent' ORDER BY e.seq`,
      [task.id],
    )) as Array<{ text: string }>;
    expect(seen.slice(0, -1).map((e) => e.status.message.parts[0].text)).toEqual(stored.map((m) => m.text));
    expect(seen[seen.length - 1].status.state).toBe('completed');
  });

  it('cancel racing completion: exactly one wins, the other is refused', async () => {
    for (let round = 0; round < 10; round++) {
      const task = await submitTask(t, requester, worker);
      const [canceled, completed] = await Promise.all([
        rpc(t, worker.handle, requester.key, 'tasks/cancel', { id: task.id }),
        reply(t, task.id, worker.key, { state: 'completed' }),
      ]);
      const cancelWon = canceled.body.result?.status.state === 'canceled';
      expect(cancelWon).toBe(completed.status === 409);
      if (!cancelWon) {
        expect(canceled.body.error.code).toBe(-32002);
      }
      const log = await events(task.id);
      expect(log.filter((e) => TERMINAL.has(e.state))).toHaveLength(1);
    }
  });

  it('requester messages racing worker replies are all kept', async () => {
    const task = await submitTask(t, requester, worker);
    await reply(t, task.id, worker.key, { state: 'working' }).expect(200);
    const sends = Array.from({ length: 15 }, (_, i) =>
      rpc(t, worker.handle, requester.key, 'message/send', {
        message: {
          kind: 'message',
          role: 'user',
          messageId: `u${i}`,
          taskId: task.id,
          parts: [{ kind: 'text', text: `u${i}` }],
        },
        configuration: { blocking: false },
      }).then((r) => r.status),
    );
    const replies = Array.from({ length: 15 }, (_, i) =>
      reply(t, task.id, worker.key, { message: { parts: [{ kind: 'text', text: `w${i}` }] } }).then((r) => r.status),
    );
    expect(await Promise.all([...sends, ...replies])).toEqual(Array(30).fill(200));
    const [{ count }] = await t.db.query(`SELECT count(*)::int AS count FROM messages WHERE task_id = $1`, [task.id]);
    expect(count).toBe(1 + 30);
    expect((await events(task.id)).map((e) => e.seq)).toEqual(Array.from({ length: 32 }, (_, i) => i + 1));
  });

  it('racing retries of a creating send make one task and leave no context behind; a retry in a context does not touch it', async () => {
    const contexts = async () =>
      (
        (await t.db.query(
          `SELECT count(*)::int AS count FROM contexts WHERE requester_identity_id = $1 AND worker_identity_id = $2`,
          [requester.id, worker.id],
        )) as Array<{ count: number }>
      )[0].count;
    const before = await contexts();
    const message = v03Message('once');
    const sends = await Promise.all(
      Array.from({ length: 8 }, () =>
        rpc(t, worker.handle, requester.key, 'message/send', { message, configuration: { blocking: false } }).expect(
          200,
        ),
      ),
    );
    const ids = new Set(sends.map((res) => res.body.result.id as string));
    expect(ids.size).toBe(1);
    expect(await contexts()).toBe(before + 1);
    const [id] = [...ids];
    const created = (await t.db.query(
      `SELECT count(*)::int AS count FROM events WHERE type = 'task.created' AND data->'task'->>'id' = $1`,
      [id],
    )) as Array<{ count: number }>;
    expect(created[0].count).toBeGreaterThanOrEqual(1);
    expect(
      new Set(
        (
          (await t.db.query(
            `SELECT organization_id FROM events WHERE type = 'task.created' AND data->'task'->>'id' = $1`,
            [id],
          )) as Array<{ organization_id: string }>
        ).map((row) => row.organization_id),
      ).size,
    ).toBe(created[0].count); // one per organization, not one per retry

    const contextId = sends[0].body.result.contextId as string;
    const inContext = v03Message('again', { contextId });
    await rpc(t, worker.handle, requester.key, 'message/send', {
      message: inContext,
      configuration: { blocking: false },
    }).expect(200);
    const [{ updated_at: touched }] = await t.db.query(`SELECT updated_at FROM contexts WHERE id = $1`, [contextId]);
    const retried = await rpc(t, worker.handle, requester.key, 'message/send', {
      message: inContext,
      configuration: { blocking: false },
    }).expect(200);
    expect(retried.body.result.contextId).toBe(contextId);
    const [{ updated_at: after }] = await t.db.query(`SELECT updated_at FROM contexts WHERE id = $1`, [contextId]);
    expect(after).toEqual(touched);
    expect(await contexts()).toBe(before + 1);
  });
});
