import { startApp, type TestApp } from '../support/app';
import { agentPair, reply, rpc, submitTask, type Agent } from '../support/a2a';
import { apiKey } from '../support/fixtures';

/**
 * docs/api.md §10: at most LEDGER_MAX_ARTIFACT_BYTES_PER_TASK of artifact content per
 * task, appends included (409 task_artifact_limit), enforced under the task's row
 * lock; and one read returns at most that much artifact content per task.
 */
describe('artifact content per task', () => {
  const LIMIT = 4096;
  /** One chunk: `[{"text":"xxx…"}]`, 1,000 characters of text → 1,012 bytes: four fit in 4,096. */
  const chunk = (c: string) => [{ text: c.repeat(1000) }];
  const CHUNK_BYTES = Buffer.byteLength(JSON.stringify(chunk('a')));
  let t: TestApp;
  let requester: Agent;
  let worker: Agent;

  beforeAll(async () => {
    t = await startApp({ LEDGER_MAX_ARTIFACT_BYTES_PER_TASK: String(LIMIT) });
    ({ requester, worker } = await agentPair(t));
  });
  afterAll(() => t.close());

  const partsOf = async (taskId: string) =>
    (await t.db.query(
      `SELECT artifact_id, jsonb_array_length(parts) AS parts, content_bytes FROM artifacts WHERE task_id = $1 ORDER BY seq`,
      [taskId],
    )) as Array<{ artifact_id: string; parts: number; content_bytes: number }>;

  it('appends count: the one that would pass the limit → 409 task_artifact_limit, and changes nothing', async () => {
    expect(Math.floor(LIMIT / CHUNK_BYTES)).toBe(4);
    const task = await submitTask(t, requester, worker);
    await reply(t, task.id, worker.key, { artifacts: [{ artifactId: 'out', parts: chunk('a') }] }).expect(200);
    for (const c of ['b', 'c', 'd']) {
      await reply(t, task.id, worker.key, { artifacts: [{ artifactId: 'out', append: true, parts: chunk(c) }] }).expect(
        200,
      );
    }
    const refused = await reply(t, task.id, worker.key, {
      state: 'working',
      artifacts: [{ artifactId: 'out', append: true, parts: chunk('e') }],
    }).expect(409);
    expect(refused.body).toMatchObject({
      code: 'task_artifact_limit',
      detail: expect.stringContaining(`${LIMIT} bytes`),
    });
    // A new artifact counts against the same budget.
    await reply(t, task.id, worker.key, { artifacts: [{ artifactId: 'other', parts: chunk('f') }] }).expect(409);
    expect(await partsOf(task.id)).toEqual([{ artifact_id: 'out', parts: 4, content_bytes: 4 * CHUNK_BYTES }]);
    // The refused reply changed nothing, not even the state it asked for.
    expect((await t.http().get(`/api/v1/tasks/${task.id}`).set(apiKey(worker.key)).expect(200)).body.status.state).toBe(
      'submitted',
    );

    // Replacing the artifact frees what it held.
    await reply(t, task.id, worker.key, { artifacts: [{ artifactId: 'out', parts: chunk('g') }] }).expect(200);
    await reply(t, task.id, worker.key, { artifacts: [{ artifactId: 'other', parts: chunk('h') }] }).expect(200);
    expect(await partsOf(task.id)).toEqual([
      { artifact_id: 'out', parts: 1, content_bytes: CHUNK_BYTES },
      { artifact_id: 'other', parts: 1, content_bytes: CHUNK_BYTES },
    ]);
  });

  it('racing appends at the limit: exactly the room left is used, the rest refused', async () => {
    const task = await submitTask(t, requester, worker);
    await reply(t, task.id, worker.key, { artifacts: [{ artifactId: 'out', parts: chunk('a') }] }).expect(200);
    const results = await Promise.all(
      Array.from({ length: 8 }, () =>
        reply(t, task.id, worker.key, { artifacts: [{ artifactId: 'out', append: true, parts: chunk('r') }] }),
      ),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 200, 200, 409, 409, 409, 409, 409]);
    expect(results.filter((r) => r.status === 409).every((r) => r.body.code === 'task_artifact_limit')).toBe(true);
    expect(await partsOf(task.id)).toEqual([{ artifact_id: 'out', parts: 4, content_bytes: 4 * CHUNK_BYTES }]);
  });

  it('a read returns at most the limit of artifact content per task (whole artifacts, in order)', async () => {
    // Written under a larger limit; read by an instance with a smaller one (as after lowering it).
    const task = await submitTask(t, requester, worker);
    for (const id of ['first', 'second', 'third']) {
      await reply(t, task.id, worker.key, { artifacts: [{ artifactId: id, parts: chunk(id[0]) }] }).expect(200);
    }
    const smaller = await startApp({ LEDGER_MAX_ARTIFACT_BYTES_PER_TASK: String(2 * CHUNK_BYTES + 100) }, t);
    try {
      const rest = await smaller.http().get(`/api/v1/tasks/${task.id}`).set(apiKey(requester.key)).expect(200);
      expect(rest.body.artifacts.map((a: { artifactId: string }) => a.artifactId)).toEqual(['first', 'second']);
      const listed = await smaller
        .http()
        .get(`/api/v1/tasks?include_artifacts=true&limit=1`)
        .set(apiKey(requester.key))
        .expect(200);
      expect(listed.body.tasks[0].artifacts.map((a: { artifactId: string }) => a.artifactId)).toEqual([
        'first',
        'second',
      ]);
      const got = await rpc(smaller, worker.handle, requester.key, 'tasks/get', { id: task.id }).expect(200);
      expect(got.body.result.artifacts.map((a: { artifactId: string }) => a.artifactId)).toEqual(['first', 'second']);
      // The full limit reads them all.
      const all = await t.http().get(`/api/v1/tasks/${task.id}`).set(apiKey(requester.key)).expect(200);
      expect(all.body.artifacts).toHaveLength(3);
    } finally {
      await smaller.close();
    }
  });
});
