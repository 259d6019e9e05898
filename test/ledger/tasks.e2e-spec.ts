import { randomUUID } from 'node:crypto';
import { startApp, type TestApp } from '../support/app';
import { agentPair, enabledAgent, reply, rpc, submitTask, v03Message, type Agent } from '../support/a2a';
import { apiKey, bearer, mintAdminKey, signup, type ConsoleAccount } from '../support/fixtures';
import { statementsFor } from '../support/statements';

/** The ledger's REST surface (docs/api.md §7): reads for both sides, the worker's reply. */
describe('ledger REST', () => {
  let t: TestApp;
  let acme: ConsoleAccount;
  let globex: ConsoleAccount;
  let requester: Agent;
  let worker: Agent;
  let acmeAdmin: string;
  let globexAdmin: string;

  beforeAll(async () => {
    t = await startApp();
    ({ acme, requester, worker } = await agentPair(t));
    globex = await signup(t, 'Globex');
    acmeAdmin = await mintAdminKey(t, acme);
    globexAdmin = await mintAdminKey(t, globex);
  });
  afterAll(() => t.close());

  const text = (value: string) => ({ parts: [{ kind: 'text', text: value }] });
  const list = (headers: Record<string, string>, query = '') => t.http().get(`/api/v1/tasks${query}`).set(headers);
  const ids = (res: { body: { tasks: Array<{ id: string }> } }) => res.body.tasks.map((task) => task.id);

  /** A worker in Globex that acme's requester may call: public, and the caller allows public egress (admission rule 4). */
  async function globexWorker(): Promise<Agent> {
    await t.db.query(`UPDATE identities SET allow_public_egress = true WHERE id = $1`, [requester.id]);
    return enabledAgent(t, globex, { publiclyDiscoverable: true });
  }

  describe('GET /api/v1/tasks/{id}', () => {
    it('the task in A2A shape plus requester, worker, created_at, updated_at', async () => {
      const task = await submitTask(t, requester, worker, 'count the beans');
      await reply(t, task.id, worker.key, {
        state: 'working',
        message: text('counting'),
        artifacts: [{ artifactId: 'tally', name: 'tally.json', parts: [{ data: { beans: 3 } }] }],
      }).expect(200);
      const res = await t.http().get(`/api/v1/tasks/${task.id}`).set(apiKey(requester.key)).expect(200);
      expect(res.body).toEqual({
        kind: 'task',
        id: task.id,
        contextId: task.contextId,
        status: {
          state: 'working',
          timestamp: expect.any(String),
          message: expect.objectContaining({
            kind: 'message',
            role: 'agent',
            parts: [{ kind: 'text', text: 'counting' }],
          }),
        },
        history: [
          expect.objectContaining({
            kind: 'message',
            role: 'user',
            parts: [{ kind: 'text', text: 'count the beans' }],
            taskId: task.id,
            contextId: task.contextId,
            created_at: expect.any(String),
          }),
          expect.objectContaining({ role: 'agent' }),
        ],
        artifacts: [{ artifactId: 'tally', name: 'tally.json', parts: [{ kind: 'data', data: { beans: 3 } }] }],
        skill: null,
        requester: { id: requester.id, agent_handle: requester.handle, organization_id: acme.organizationId },
        worker: { id: worker.id, agent_handle: worker.handle, organization_id: acme.organizationId },
        created_at: expect.any(String),
        updated_at: expect.any(String),
      });
      const short = await t.http().get(`/api/v1/tasks/${task.id}?history_length=1`).set(apiKey(worker.key)).expect(200);
      expect(short.body.history.map((m: { role: string }) => m.role)).toEqual(['agent']);
      await t.http().get(`/api/v1/tasks/${task.id}?history_length=-1`).set(apiKey(worker.key)).expect(400);
    });

    it('a third identity, another organization, a non-id → 404 (never 403)', async () => {
      const task = await submitTask(t, requester, worker);
      const third = await enabledAgent(t, acme);
      for (const headers of [apiKey(third.key), apiKey(globexAdmin), bearer(globex)]) {
        const res = await t.http().get(`/api/v1/tasks/${task.id}`).set(headers).expect(404);
        expect(res.body.code).toBe('task_not_found');
        await t.http().get(`/api/v1/tasks/${task.id}/messages`).set(headers).expect(404);
      }
      await t.http().get('/api/v1/tasks/not-a-task').set(apiKey(acmeAdmin)).expect(404);
      await t.http().get(`/api/v1/tasks/${randomUUID()}`).set(apiKey(acmeAdmin)).expect(404);
      await t.http().get(`/api/v1/tasks/${task.id}`).set(apiKey(acmeAdmin)).expect(200);
      await t.http().get(`/api/v1/tasks/${task.id}`).set(bearer(acme)).expect(200);
    });

    it("across organizations, each side's organization sees the task", async () => {
      const foreign = await globexWorker();
      const task = await submitTask(t, requester, foreign);
      for (const headers of [
        apiKey(requester.key),
        apiKey(foreign.key),
        apiKey(acmeAdmin),
        apiKey(globexAdmin),
        bearer(acme),
        bearer(globex),
      ]) {
        await t.http().get(`/api/v1/tasks/${task.id}`).set(headers).expect(200);
      }
      const third = await signup(t);
      await t.http().get(`/api/v1/tasks/${task.id}`).set(bearer(third)).expect(404);
    });
  });

  describe('GET /api/v1/tasks', () => {
    it('newest first, cursor pages, each side sees its own; filters', async () => {
      const pair = await agentPair(t, await signup(t));
      const admin = await mintAdminKey(t, pair.acme);
      const made: Array<{ id: string; contextId: string }> = [];
      for (let i = 0; i < 5; i++) {
        made.push(await submitTask(t, pair.requester, pair.worker, `job ${i}`));
      }
      const back = await submitTask(t, pair.worker, pair.requester, 'the other way');

      const pages: string[] = [];
      let cursor: string | null = '';
      while (cursor !== null) {
        const res: { body: any } = await list(apiKey(admin), `?limit=2${cursor ? `&cursor=${cursor}` : ''}`).expect(
          200,
        );
        expect(res.body.tasks.length).toBeLessThanOrEqual(2);
        pages.push(...ids(res));
        cursor = res.body.next_cursor;
      }
      expect(pages).toEqual([back.id, ...made.map((task) => task.id).reverse()]);

      expect(ids(await list(apiKey(pair.requester.key), '?role=requester'))).toEqual(
        made.map((task) => task.id).reverse(),
      );
      expect(ids(await list(apiKey(pair.requester.key), '?role=worker'))).toEqual([back.id]);
      expect(ids(await list(apiKey(pair.worker.key)))).toHaveLength(6);
      expect(ids(await list(apiKey(admin), `?role=worker&identity=${pair.requester.handle}`))).toEqual([back.id]);
      expect(ids(await list(apiKey(admin), `?identity=${pair.worker.id}&role=requester`))).toEqual([back.id]);
      // An organization stands on both sides here: the peer may be either participant.
      expect(ids(await list(apiKey(admin), `?peer=${pair.requester.handle}`))).toEqual([
        back.id,
        ...made.map((task) => task.id).reverse(),
      ]);
      expect(ids(await list(apiKey(admin), `?role=worker&peer=${pair.requester.handle}`))).toEqual(
        made.map((task) => task.id).reverse(),
      );
      expect(ids(await list(apiKey(pair.worker.key), `?peer=${pair.requester.id}`))).toHaveLength(6);
      expect(ids(await list(apiKey(pair.requester.key), `?identity=${pair.worker.handle}`))).toEqual([]);

      await reply(t, made[1].id, pair.worker.key, { state: 'working' }).expect(200);
      expect(ids(await list(apiKey(pair.worker.key), '?role=worker&state=working'))).toEqual([made[1].id]);
      expect(ids(await list(apiKey(pair.worker.key), `?context_id=${made[2].contextId}`))).toEqual([made[2].id]);
      const [{ updated_at: cut }] = await t.db.query(
        `SELECT to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS updated_at FROM tasks WHERE id = $1`,
        [made[4].id],
      );
      expect(ids(await list(apiKey(admin), `?updated_after=${cut}`))).toEqual(expect.arrayContaining([made[1].id]));
      expect(ids(await list(apiKey(admin), `?updated_after=${cut}`))).not.toContain(made[0].id);

      expect(ids(await list(apiKey(globexAdmin)))).not.toEqual(expect.arrayContaining([made[0].id]));
      expect(ids(await list(bearer(globex)))).not.toContain(made[0].id);
    });

    it("reads upstream ids for the worker's side only: one statement for a whole page, none for the requester's", async () => {
      const pair = await agentPair(t, await signup(t));
      const made: Array<{ id: string; contextId: string }> = [];
      for (let i = 0; i < 3; i++) {
        made.push(await submitTask(t, pair.requester, pair.worker, `job ${i}`));
      }
      /** How many statements a GET with `key` ran that read upstream ids. */
      const upstreamReads = async (key: string, path: string) => {
        const stop = statementsFor(t, key);
        let statements: string[];
        try {
          await t.http().get(path).set(apiKey(key)).expect(200);
        } finally {
          statements = stop();
        }
        return statements.filter((statement) => /upstream_task_id/.test(statement)).length;
      };
      expect(ids(await list(apiKey(pair.worker.key), '?role=worker'))).toHaveLength(3);
      expect(await upstreamReads(pair.worker.key, '/api/v1/tasks?role=worker')).toBe(1);
      expect(await upstreamReads(pair.requester.key, '/api/v1/tasks?role=requester')).toBe(0);
      expect(await upstreamReads(pair.worker.key, `/api/v1/tasks/${made[0].id}`)).toBe(1);
      expect(await upstreamReads(pair.requester.key, `/api/v1/tasks/${made[0].id}`)).toBe(0);
      expect(await upstreamReads(pair.worker.key, `/api/v1/contexts/${made[0].contextId}`)).toBe(1);
      expect(await upstreamReads(pair.requester.key, `/api/v1/contexts/${made[0].contextId}`)).toBe(0);
    });

    it('items carry the latest message by default; history_length and include_artifacts', async () => {
      const pair = await agentPair(t, await signup(t));
      const task = await submitTask(t, pair.requester, pair.worker, 'please');
      await reply(t, task.id, pair.worker.key, {
        message: text('ack'),
        artifacts: [{ parts: [{ kind: 'text', text: 'draft' }] }],
      }).expect(200);
      const [item] = (await list(apiKey(pair.worker.key)).expect(200)).body.tasks;
      expect(item.history.map((m: any) => m.parts[0].text)).toEqual(['ack']);
      expect(item).not.toHaveProperty('artifacts');
      const [full] = (
        await list(apiKey(pair.worker.key), '?limit=40&history_length=5&include_artifacts=true').expect(200)
      ).body.tasks;
      expect(full.history).toHaveLength(2);
      expect(full.artifacts).toHaveLength(1);
    });

    it.each([
      '?role=boss',
      '?state=done',
      '?context_id=nope',
      '?updated_after=yesterday',
      '?limit=0',
      '?limit=201',
      '?cursor=%%%',
      '?history_length=101',
      '?limit=200&history_length=2',
      '?include_artifacts=maybe',
      '?colour=red',
    ])('refuses %s with 400', async (query) => {
      const res = await list(apiKey(acmeAdmin), query);
      expect(res.status).toBe(400);
      expect(res.body.code).toEqual(expect.any(String));
    });
  });

  describe('messages and contexts', () => {
    it('GET /api/v1/tasks/{id}/messages: newest first, paginated', async () => {
      const task = await submitTask(t, requester, worker, 'm0');
      await reply(t, task.id, worker.key, { state: 'input-required', message: text('m1') }).expect(200);
      await rpc(t, worker.handle, requester.key, 'message/send', {
        message: v03Message('m2', { taskId: task.id }),
        configuration: { blocking: false },
      });
      await reply(t, task.id, worker.key, { message: text('m3') }).expect(200);
      const seen: string[] = [];
      let cursor: string | null = '';
      while (cursor !== null) {
        const res: { body: any } = await t
          .http()
          .get(`/api/v1/tasks/${task.id}/messages?limit=3${cursor ? `&cursor=${cursor}` : ''}`)
          .set(apiKey(requester.key))
          .expect(200);
        seen.push(...res.body.messages.map((m: any) => m.parts[0].text));
        cursor = res.body.next_cursor;
      }
      expect(seen).toEqual(['m3', 'm2', 'm1', 'm0']);
    });

    it('GET /api/v1/contexts and /contexts/{id} with its tasks; invisible → 404', async () => {
      const pair = await agentPair(t, await signup(t));
      const first = await submitTask(t, pair.requester, pair.worker);
      const second = await rpc(t, pair.worker.handle, pair.requester.key, 'message/send', {
        message: v03Message('same context', { contextId: first.contextId }),
        configuration: { blocking: false },
      });
      const other = await submitTask(t, pair.requester, pair.worker);
      const contexts = await t.http().get('/api/v1/contexts').set(apiKey(pair.worker.key)).expect(200);
      expect(contexts.body).toEqual({
        contexts: [
          expect.objectContaining({ id: other.contextId }),
          {
            id: first.contextId,
            requester: expect.objectContaining({ agent_handle: pair.requester.handle }),
            worker: expect.objectContaining({ agent_handle: pair.worker.handle }),
            created_at: expect.any(String),
            updated_at: expect.any(String),
          },
        ],
        next_cursor: null,
      });
      const detail = await t
        .http()
        .get(`/api/v1/contexts/${first.contextId}`)
        .set(apiKey(pair.requester.key))
        .expect(200);
      expect(detail.body.tasks.map((task: { id: string }) => task.id)).toEqual([second.body.result.id, first.id]);
      expect(
        (await t.http().get('/api/v1/contexts?role=worker').set(apiKey(pair.requester.key)).expect(200)).body.contexts,
      ).toEqual([]);
      await t.http().get(`/api/v1/contexts/${first.contextId}`).set(apiKey(worker.key)).expect(404);
      await t.http().get(`/api/v1/contexts/${first.contextId}`).set(bearer(globex)).expect(404);
      await t.http().get('/api/v1/contexts/nope').set(bearer(acme)).expect(404);
    });

    it("an organization's pages of contexts: its own (on both sides) once each, in order, across cursors", async () => {
      const account = await signup(t);
      const pair = await agentPair(t, account);
      const made: string[] = [];
      for (let i = 0; i < 3; i++) {
        made.push((await submitTask(t, pair.requester, pair.worker)).contextId);
      }
      made.push((await submitTask(t, pair.worker, pair.requester)).contextId);
      for (const headers of [apiKey(await mintAdminKey(t, account)), bearer(account)]) {
        const pages: string[] = [];
        let cursor: string | null = '';
        while (cursor !== null) {
          const res: { body: any } = await t
            .http()
            .get(`/api/v1/contexts?limit=2${cursor ? `&cursor=${cursor}` : ''}`)
            .set(headers)
            .expect(200);
          expect(res.body.contexts.length).toBeLessThanOrEqual(2);
          pages.push(...res.body.contexts.map((context: { id: string }) => context.id));
          cursor = res.body.next_cursor;
        }
        expect(pages).toEqual([...made].reverse());
      }
    });
  });

  describe('POST /api/v1/tasks/{id}/reply', () => {
    it("the worker's own key, or its organization's admin key or Console; the requester → 403; others → 404", async () => {
      const foreign = await globexWorker();
      const task = await submitTask(t, requester, foreign);
      for (const headers of [apiKey(foreign.key), apiKey(globexAdmin), bearer(globex)]) {
        await t.http().post(`/api/v1/tasks/${task.id}/reply`).set(headers).send({ state: 'working' }).expect(200);
      }
      for (const headers of [apiKey(requester.key), apiKey(acmeAdmin), bearer(acme)]) {
        const res = await t
          .http()
          .post(`/api/v1/tasks/${task.id}/reply`)
          .set(headers)
          .send({ state: 'working' })
          .expect(403);
        expect(res.body.code).toBe('not_task_worker');
      }
      const third = await enabledAgent(t, acme);
      const stranger = await signup(t);
      for (const headers of [apiKey(third.key), bearer(stranger)]) {
        await t.http().post(`/api/v1/tasks/${task.id}/reply`).set(headers).send({ state: 'working' }).expect(404);
      }
    });

    it('returns the task after the reply; parts in the v0.3 or v1.0 form', async () => {
      const task = await submitTask(t, requester, worker);
      const res = await reply(t, task.id, worker.key, {
        state: 'completed',
        message: {
          parts: [
            { kind: 'text', text: 'v0.3' },
            { text: 'v1.0', mediaType: 'text/plain' },
            { kind: 'file', file: { bytes: 'aGk=', name: 'hi.txt', mimeType: 'text/plain' } },
            { raw: 'aGk=' },
          ],
          metadata: { lang: 'en' },
        },
      }).expect(200);
      expect(res.body.status).toMatchObject({
        state: 'completed',
        message: {
          role: 'agent',
          metadata: { lang: 'en' },
          parts: [
            { kind: 'text', text: 'v0.3' },
            { kind: 'text', text: 'v1.0' },
            { kind: 'file', file: { bytes: 'aGk=', name: 'hi.txt', mimeType: 'text/plain' } },
            { kind: 'file', file: { bytes: 'aGk=' } },
          ],
        },
      });
      const v1 = await rpc(t, worker.handle, requester.key, 'GetTask', { id: task.id }, '1.0');
      expect(v1.body.result.status.message.parts).toEqual([
        { text: 'v0.3' },
        { text: 'v1.0', mediaType: 'text/plain' },
        { raw: 'aGk=', filename: 'hi.txt', mediaType: 'text/plain' },
        { raw: 'aGk=' },
      ]);
    });

    it.each([
      ['an empty body', {}],
      ['an empty artifact list only', { artifacts: [] }],
      ['an unknown field', { state: 'working', mood: 'happy' }],
      ["state submitted (the requester's)", { state: 'submitted' }],
      ["state canceled (the requester's)", { state: 'canceled' }],
      ['a message without parts', { message: { parts: [] } }],
      ['101 parts', { message: { parts: Array.from({ length: 101 }, () => ({ kind: 'text', text: 'x' })) } }],
      ['11 artifacts', { artifacts: Array.from({ length: 11 }, () => ({ parts: [{ text: 'x' }] })) }],
      ['a part of unknown kind', { message: { parts: [{ kind: 'video' }] } }],
      ['a part with two contents', { message: { parts: [{ text: 'x', url: 'https://example.test' }] } }],
      ['a file part without bytes or uri', { message: { parts: [{ kind: 'file', file: { name: 'x' } }] } }],
      ['bytes that are not base64', { message: { parts: [{ raw: 'not base64!' }] } }],
      ['a part that is not an object', { message: { parts: ['hello'] } }],
      ['a null state', { state: null, message: { parts: [{ text: 'x' }] } }],
      ['null artifacts', { artifacts: null }],
      ['a null lastChunk', { artifacts: [{ parts: [{ text: 'x' }], lastChunk: null }] }],
    ])('refuses %s with 400', async (_, body) => {
      const task = await submitTask(t, requester, worker);
      const res = await reply(t, task.id, worker.key, body).expect(400);
      expect(res.body.code).toBe('validation_failed');
    });

    it('field errors point at the part', async () => {
      const task = await submitTask(t, requester, worker);
      const res = await reply(t, task.id, worker.key, {
        artifacts: [{ parts: [{ text: 'ok' }] }, { parts: [{ text: 'ok' }, { text: 5 }] }],
      }).expect(400);
      expect(res.body.errors).toEqual([
        { field: 'artifacts[1].parts[1]', message: expect.stringContaining('text must be a string') },
      ]);
    });

    it('artifacts: replace without append, extend with append, refuse append to unknown or closed ones', async () => {
      const task = await submitTask(t, requester, worker);
      await reply(t, task.id, worker.key, { artifacts: [{ artifactId: 'a', parts: [{ text: '1' }] }] }).expect(200);
      await reply(t, task.id, worker.key, {
        artifacts: [{ artifactId: 'a', append: true, parts: [{ text: '2' }] }],
      }).expect(200);
      const replaced = await reply(t, task.id, worker.key, {
        artifacts: [{ artifactId: 'a', name: 'v2', parts: [{ text: 'new' }] }],
      }).expect(200);
      expect(replaced.body.artifacts).toEqual([
        { artifactId: 'a', name: 'v2', parts: [{ kind: 'text', text: 'new' }] },
      ]);
      const unknown = await reply(t, task.id, worker.key, {
        artifacts: [{ artifactId: 'b', append: true, parts: [{ text: 'x' }] }],
      }).expect(409);
      expect(unknown.body.code).toBe('artifact_not_found');
      await reply(t, task.id, worker.key, {
        artifacts: [{ artifactId: 'a', append: true, lastChunk: true, parts: [{ text: 'end' }] }],
      }).expect(200);
      const closed = await reply(t, task.id, worker.key, {
        state: 'completed',
        artifacts: [{ artifactId: 'a', append: true, parts: [{ text: 'more' }] }],
      }).expect(409);
      expect(closed.body.code).toBe('artifact_closed');
      // the failed reply changed nothing, not even its state
      expect((await t.http().get(`/api/v1/tasks/${task.id}`).set(apiKey(worker.key))).body.status.state).toBe(
        'submitted',
      );
    });
  });

  describe('the state machine through the reply', () => {
    const REPLY_STATES = ['working', 'input-required', 'auth-required', 'completed', 'failed', 'rejected'];
    const LEGAL: Record<string, string[]> = {
      submitted: REPLY_STATES,
      working: REPLY_STATES,
      'input-required': ['completed', 'failed', 'rejected'],
      'auth-required': ['working', 'input-required', 'completed', 'failed', 'rejected'],
    };

    /** A task of the pair in `state`, reached through the API. */
    async function taskIn(state: string): Promise<string> {
      const task = await submitTask(t, requester, worker);
      if (state === 'canceled') {
        await rpc(t, worker.handle, requester.key, 'tasks/cancel', { id: task.id }).expect(200);
      } else if (state !== 'submitted') {
        await reply(t, task.id, worker.key, { state }).expect(200);
      }
      return task.id;
    }

    const cases = Object.keys({ ...LEGAL, completed: 1, failed: 1, canceled: 1, rejected: 1 }).flatMap((from) =>
      REPLY_STATES.map((to) => [from, to] as const),
    );
    it.each(cases)('%s → %s', async (from, to) => {
      const id = await taskIn(from);
      const res = await reply(t, id, worker.key, { state: to, message: text(`${from} → ${to}`) });
      if (LEGAL[from]?.includes(to)) {
        expect(res.status).toBe(200);
        expect(res.body.status).toMatchObject({
          state: to,
          message: { parts: [{ kind: 'text', text: `${from} → ${to}` }] },
        });
      } else {
        expect(res.status).toBe(409);
        expect(res.body.code).toBe(LEGAL[from] ? 'invalid_transition' : 'task_terminal');
        const after = await t.http().get(`/api/v1/tasks/${id}`).set(apiKey(worker.key)).expect(200);
        expect(after.body.status.state).toBe(from);
        expect(after.body.history).toHaveLength(1);
      }
    });

    it('a reply without a state keeps the state; a terminal task refuses even that', async () => {
      const id = await taskIn('auth-required');
      const res = await reply(t, id, worker.key, { message: text('still waiting for your sign-in') }).expect(200);
      expect(res.body.status.state).toBe('auth-required');
      const done = await taskIn('failed');
      expect((await reply(t, done, worker.key, { message: text('sorry') }).expect(409)).body.code).toBe(
        'task_terminal',
      );
      expect(
        (await reply(t, done, worker.key, { artifacts: [{ parts: [{ text: 'late' }] }] }).expect(409)).body.code,
      ).toBe('task_terminal');
    });
  });

  describe('Idempotency-Key', () => {
    const replyWithKey = (id: string, key: string, body: object, headers = apiKey(worker.key)) =>
      t.http().post(`/api/v1/tasks/${id}/reply`).set(headers).set('Idempotency-Key', key).send(body);

    it('the same key and body replay the first response; nothing is applied twice', async () => {
      const task = await submitTask(t, requester, worker);
      const body = { message: text('progress 50%'), artifacts: [{ parts: [{ text: 'half' }] }] };
      const first = await replyWithKey(task.id, 'reply-1', body).expect(200);
      await reply(t, task.id, worker.key, { state: 'working' }).expect(200);
      const again = await replyWithKey(task.id, 'reply-1', { artifacts: body.artifacts, message: body.message }).expect(
        200,
      );
      expect(again.body).toEqual(first.body);
      const now = await t.http().get(`/api/v1/tasks/${task.id}`).set(apiKey(worker.key)).expect(200);
      expect(now.body.history).toHaveLength(2);
      expect(now.body.artifacts).toHaveLength(1);
      expect(now.body.status.state).toBe('working');
    });

    it("the same key with another body → 422; another caller's same key is its own", async () => {
      const task = await submitTask(t, requester, worker);
      await replyWithKey(task.id, 'reply-2', { state: 'working' }).expect(200);
      const res = await replyWithKey(task.id, 'reply-2', { state: 'completed' }).expect(422);
      expect(res.body.code).toBe('idempotency_key_reused');
      await replyWithKey(task.id, 'reply-2', { state: 'completed' }, apiKey(acmeAdmin)).expect(200);
    });

    it('a failed request records nothing: its retry runs', async () => {
      const task = await submitTask(t, requester, worker);
      await replyWithKey(task.id, 'reply-3', {
        artifacts: [{ artifactId: 'x', append: true, parts: [{ text: '1' }] }],
      }).expect(409);
      await reply(t, task.id, worker.key, { artifacts: [{ artifactId: 'x', parts: [{ text: '0' }] }] }).expect(200);
      await replyWithKey(task.id, 'reply-3', {
        artifacts: [{ artifactId: 'x', append: true, parts: [{ text: '1' }] }],
      }).expect(200);
    });

    it('concurrent requests with one key apply once', async () => {
      const task = await submitTask(t, requester, worker);
      const body = { message: text('exactly once') };
      const results = await Promise.all(Array.from({ length: 8 }, () => replyWithKey(task.id, 'reply-4', body)));
      expect(results.map((r) => r.status)).toEqual(Array(8).fill(200));
      const [{ count }] = await t.db.query(
        `SELECT count(*)::int AS count FROM messages WHERE task_id = $1 AND role = 'agent'`,
        [task.id],
      );
      expect(count).toBe(1);
    });

    it('a key that is too long or not visible ASCII → 400', async () => {
      const task = await submitTask(t, requester, worker);
      for (const key of ['x'.repeat(256), 'has space']) {
        const res = await replyWithKey(task.id, key, { state: 'working' }).expect(400);
        expect(res.body.code).toBe('invalid_idempotency_key');
      }
    });
  });
});
