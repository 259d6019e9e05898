import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TaskState, type StreamResponse, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { startApp, type TestApp } from '../support/app';
import { say, sdkClient, startAppForCards, type Binding } from '../support/a2a-sdk';
import { agentPair, enabledAgent, rpc, v03Message, type Agent } from '../support/a2a';
import { eventually } from '../support/eventually';
import { apiKey, bearer, signup, type ConsoleAccount } from '../support/fixtures';
import { freePort } from '../support/server-process';
import { UpstreamForwarder } from '../../src/upstream/upstream-forwarder';
import { startUpstreamAgent, type UpstreamAgent } from '../support/upstream-agent';

const SECRET = 'upstream-secret-token-123';

/** The official client, as a requester of the bridged identity, through the service (over one binding the service serves, A2A 1.0). */
const requesterClient = async (t: TestApp, requester: Agent, bridged: Agent, binding: Binding = 'JSONRPC') =>
  (await sdkClient(t, requester, bridged, binding, '1.0')).client;
const textOf = (message: { parts: Array<{ content?: { $case: string; value?: unknown } }> } | undefined) =>
  message?.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');

describe('upstream (bridged) identities', () => {
  let t: TestApp;
  let upstream: UpstreamAgent;
  let acme: ConsoleAccount;
  let requester: Agent;
  let bridged: Agent;
  let client: Client;

  beforeAll(async () => {
    t = await startAppForCards({
      WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true',
      EVENTS_POLL_INTERVAL_MS: '50',
      UPSTREAM_RETRY_SCHEDULE_MS: '100,100,100,100,100,200,200,200,200,200',
    });
    upstream = await startUpstreamAgent(await freePort());
    acme = await signup(t, 'Acme');
    requester = await enabledAgent(t, acme);
    bridged = await enabledAgent(t, acme);
    await t
      .http()
      .put(`/api/v1/identities/${bridged.handle}/upstream`)
      .set(bearer(acme))
      .send({ url: upstream.url, card_url: upstream.cardUrl, auth: { type: 'bearer', value: SECRET } })
      .expect(200);
    client = await requesterClient(t, requester, bridged);
  });
  afterAll(async () => {
    await t.close();
    await upstream.close();
  });

  describe('the upstream resource', () => {
    it('is set with defaults from the card, read without its secret (by the own key too), and removed', async () => {
      const other = await enabledAgent(t, acme);
      const set = await t
        .http()
        .put(`/api/v1/identities/${other.handle}/upstream`)
        .set(bearer(acme))
        .send({ url: upstream.url, auth: { type: 'api_key', header: 'X-Upstream-Key', value: SECRET } })
        .expect(200);
      expect(set.body).toEqual({
        url: upstream.url,
        card_url: null,
        protocol_version: '1.0',
        binding: 'JSONRPC',
        streaming: true,
        auth: { type: 'api_key', header: 'X-Upstream-Key', value_set: true },
        trusted_keys: null,
        trusted_jwks_uri: null,
        card_verification: { status: 'unsigned', kid: null, error: null, checked_at: expect.any(String) },
        created_at: expect.any(String),
        updated_at: expect.any(String),
      });
      expect(JSON.stringify(set.body)).not.toContain(SECRET);
      const own = await t.http().get(`/api/v1/identities/${other.handle}/upstream`).set(apiKey(other.key)).expect(200);
      expect(own.body).toEqual(set.body);
      expect(JSON.stringify(own.body)).not.toContain(SECRET);
      await t.http().get(`/api/v1/identities/${other.handle}/upstream`).set(apiKey(requester.key)).expect(403);
      await t
        .http()
        .put(`/api/v1/identities/${other.handle}/upstream`)
        .set(apiKey(other.key))
        .send({ url: upstream.url })
        .expect(403);
      const globex = await signup(t, 'Globex');
      await t.http().get(`/api/v1/identities/${other.handle}/upstream`).set(bearer(globex)).expect(404);

      await t
        .http()
        .put(`/api/v1/identities/${other.handle}/upstream`)
        .set(bearer(acme))
        .send({ url: 'ftp://example.test/a2a' })
        .expect(400)
        .expect((res) => expect(res.body).toMatchObject({ code: 'invalid_upstream_url', errors: [{ field: 'url' }] }));
      // The error names the field at fault.
      await t
        .http()
        .put(`/api/v1/identities/${other.handle}/upstream`)
        .set(bearer(acme))
        .send({ url: upstream.url, card_url: 'ftp://example.test/card.json' })
        .expect(400)
        .expect((res) =>
          expect(res.body).toMatchObject({ code: 'invalid_upstream_url', errors: [{ field: 'card_url' }] }),
        );
      await t
        .http()
        .put(`/api/v1/identities/${other.handle}/upstream`)
        .set(bearer(acme))
        .send({ url: upstream.url, auth: { type: 'bearer' } })
        .expect(400);
      // Every binding is forwarded now; a card with no interface the request allows is still refused.
      await t
        .http()
        .put(`/api/v1/identities/${other.handle}/upstream`)
        .set(bearer(acme))
        .send({ url: upstream.url, protocol_version: '0.3' })
        .expect(422)
        .expect((res) => expect(res.body.code).toBe('upstream_binding_unsupported'));

      await t.http().delete(`/api/v1/identities/${other.handle}/upstream`).set(bearer(acme)).expect(204);
      await t
        .http()
        .get(`/api/v1/identities/${other.handle}/upstream`)
        .set(bearer(acme))
        .expect(404)
        .expect((res) => expect(res.body.code).toBe('upstream_not_set'));
    });

    it('refuses a private upstream address unless private networks are allowed', async () => {
      const strict = await startApp({}, t);
      try {
        const res = await strict
          .http()
          .put(`/api/v1/identities/${bridged.handle}/upstream`)
          .set(bearer(acme))
          .send({ url: 'https://10.0.0.7/a2a' })
          .expect(400);
        expect(res.body.code).toBe('invalid_upstream_url');
        const http = await strict
          .http()
          .put(`/api/v1/identities/${bridged.handle}/upstream`)
          .set(bearer(acme))
          .send({ url: upstream.url })
          .expect(400);
        expect(http.body.code).toBe('invalid_upstream_url');
      } finally {
        await strict.close();
      }
    });

    it('is tested before it is saved, or as saved: what its card says and what saving would store, nothing changed', async () => {
      const other = await enabledAgent(t, acme);
      const test = (handle: string, body?: object) => {
        const req = t.http().post(`/api/v1/identities/${handle}/upstream/test`).set(bearer(acme));
        return body === undefined ? req : req.send(body);
      };
      const found = await test(other.handle, { url: upstream.url }).expect(200);
      expect(found.body).toEqual({
        tested: 'request',
        url: upstream.url,
        // Under the endpoint, else at its origin: wherever the card answered.
        card_url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/(a2a\/)?\.well-known\/agent-card\.json$/),
        reachable: true,
        reason: null,
        card: {
          name: 'Echo',
          description: 'Echoes what it is told, with an artifact.',
          version: '1.0.0',
          skills: 1,
          streaming: true,
          interfaces: [{ url: upstream.url, binding: 'JSONRPC', protocol_version: '1.0' }],
        },
        card_verification: { status: 'unsigned', kid: null, error: null, checked_at: expect.any(String) },
        forward_to: { url: upstream.url, protocol_version: '1.0', binding: 'JSONRPC', streaming: true },
        problem: null,
      });
      // Nothing was saved: an empty body finds no upstream to test.
      await t.http().get(`/api/v1/identities/${other.handle}/upstream`).set(bearer(acme)).expect(404);
      const none = await test(other.handle).expect(404);
      expect(none.body.code).toBe('upstream_not_set');

      // What a PUT would refuse is the finding: its code and words, and nothing to forward to.
      const unsupported = await test(other.handle, { url: upstream.url, protocol_version: '0.3' }).expect(200);
      expect(unsupported.body).toMatchObject({
        reachable: true,
        forward_to: null,
        problem: { code: 'upstream_binding_unsupported', detail: expect.stringContaining('offers no') },
      });
      const closed = `http://127.0.0.1:${await freePort()}/a2a`;
      const down = await test(other.handle, { url: closed }).expect(200);
      expect(down.body).toMatchObject({
        url: closed,
        card_url: null,
        reachable: false,
        reason: 'the connection was refused',
        card: null,
        card_verification: null,
        forward_to: null,
        problem: { code: 'upstream_card_unreachable' },
      });
      // Named in full, the PUT reads no card and would succeed: no problem, though the card does not answer.
      const named = await test(other.handle, { url: closed, protocol_version: '1.0', binding: 'JSONRPC' }).expect(200);
      expect(named.body).toMatchObject({
        reachable: false,
        forward_to: { url: closed, protocol_version: '1.0', binding: 'JSONRPC', streaming: false },
        problem: null,
      });

      // The saved upstream: tested as saved, and left as it was.
      const before = await t.http().get(`/api/v1/identities/${bridged.handle}/upstream`).set(bearer(acme)).expect(200);
      const saved = await test(bridged.handle).expect(200);
      expect(saved.body).toMatchObject({
        tested: 'saved',
        url: upstream.url,
        card_url: upstream.cardUrl,
        reachable: true,
        forward_to: { url: upstream.url, protocol_version: '1.0', binding: 'JSONRPC', streaming: true },
        problem: null,
      });
      const after = await t.http().get(`/api/v1/identities/${bridged.handle}/upstream`).set(bearer(acme)).expect(200);
      expect(after.body).toEqual(before.body);

      // The request's mistakes are refused as the PUT refuses them; the own key may not test, another organization finds nothing.
      const partial = await test(other.handle, { card_url: upstream.cardUrl }).expect(400);
      expect(partial.body.code).toBe('validation_failed');
      expect(partial.body.errors).toEqual([{ field: 'url', message: expect.stringMatching(/^url is required when/) }]);
      expect((await test(other.handle, { url: 'ftp://example.test/a2a' }).expect(400)).body.code).toBe(
        'invalid_upstream_url',
      );
      await t.http().post(`/api/v1/identities/${bridged.handle}/upstream/test`).set(apiKey(bridged.key)).expect(403);
      const globex = await signup(t, 'Globex Tester');
      await t.http().post(`/api/v1/identities/${bridged.handle}/upstream/test`).set(bearer(globex)).expect(404);
    });

    it('is tested at most RATE_LIMIT_UPSTREAM_TESTS_PER_MINUTE times a minute per organization: the 11th gets 429', async () => {
      // The default quota (10), on an instance of the same database; its counters are its own.
      const limited = await startApp(
        { RATE_LIMIT_UPSTREAM_TESTS_PER_MINUTE: '10', WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true' },
        t,
      );
      try {
        const org = await signup(limited, 'Rate Tester');
        const [one, two] = [await enabledAgent(limited, org), await enabledAgent(limited, org)];
        const test = (account: ConsoleAccount, handle: string) =>
          limited
            .http()
            .post(`/api/v1/identities/${handle}/upstream/test`)
            .set(bearer(account))
            .send({ url: upstream.url });
        for (let i = 0; i < 10; i++) {
          // Per organization, whichever of its identities.
          const ok = await test(org, i % 2 ? one.handle : two.handle).expect(200);
          expect(ok.body.reachable).toBe(true);
          expect(ok.headers['ratelimit-policy']).toBe('"upstream_tests";q=10;w=60');
        }
        const refused = await test(org, one.handle).expect(429);
        expect(refused.headers['content-type']).toMatch(/application\/problem\+json/);
        expect(refused.body.code).toBe('rate_limited');
        const retryAfter = Number(refused.headers['retry-after']);
        expect(retryAfter).toBeGreaterThan(0);
        expect(refused.headers.ratelimit).toBe(`"upstream_tests";r=0;t=${retryAfter}`);
        // The PUT, another organization's tests and the webhook pings are not counted on it.
        await limited
          .http()
          .put(`/api/v1/identities/${one.handle}/upstream`)
          .set(bearer(org))
          .send({ url: upstream.url, card_url: upstream.cardUrl })
          .expect(200);
        const other = await signup(limited, 'Other Rate Tester');
        await test(other, (await enabledAgent(limited, other)).handle).expect(200);
      } finally {
        await limited.close();
      }
    });

    it("imports the upstream card's description and skills; the card's URLs stay the service's", async () => {
      const res = await t
        .http()
        .post(`/api/v1/identities/${bridged.handle}/upstream/import-card`)
        .set(bearer(acme))
        .expect(200);
      expect(res.body).toMatchObject({
        description: 'Echoes what it is told, with an artifact.',
        skills: [expect.objectContaining({ id: 'echo', name: 'Echo', tags: ['echo', 'test'] })],
        card_url: `${t.baseUrl}/a2a/${bridged.handle}/card`,
      });
      const card = await t.http().get(`/a2a/${bridged.handle}/card`).set('A2A-Version', '1.0').expect(200);
      expect(card.body.supportedInterfaces[0].url).toBe(`${t.baseUrl}/a2a/${bridged.handle}`);
      expect(card.body.skills.map((s: { id: string }) => s.id)).toEqual(['echo']);
    });

    it('answers a card of the wrong shape with a 4xx naming it, never a 500: test, PUT and import-card', async () => {
      let served: object = {};
      const server = createServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(served));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/a2a`;
      const cardUrl = `${url}/card.json`;
      const good = {
        name: 'Shaped',
        description: 'A card.',
        version: '1.0.0',
        capabilities: {},
        defaultInputModes: ['text/plain'],
        defaultOutputModes: ['text/plain'],
        skills: [{ id: 's', name: 'S', description: 'A skill.', tags: ['t'] }],
        supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
      };
      const org = await signup(t, 'Hostile Cards');
      const other = await enabledAgent(t, org);
      const path = `/api/v1/identities/${other.handle}/upstream`;
      try {
        served = good;
        await t.http().put(path).set(bearer(org)).send({ url, card_url: cardUrl }).expect(200);
        const hostile: Array<[object, string]> = [
          [{ ...good, name: 5 }, 'name is not text'],
          [{ ...good, version: 1 }, 'version is not text'],
          [{ ...good, supportedInterfaces: { url, protocolBinding: 'JSONRPC' } }, 'supportedInterfaces'],
          [{ ...good, skills: [5] }, 'skills'],
        ];
        for (const [card, reason] of hostile) {
          served = card;
          const tested = await t.http().post(`${path}/test`).set(bearer(org)).send({ url, card_url: cardUrl });
          expect(tested.status).toBe(200);
          expect(tested.body).toMatchObject({
            reachable: false,
            reason: expect.stringContaining(reason),
            card: null,
            forward_to: null,
            problem: { code: 'upstream_card_unreachable', detail: expect.stringContaining(reason) },
          });
          const put = await t.http().put(path).set(bearer(org)).send({ url, card_url: cardUrl });
          expect([put.status, put.body.code]).toEqual([422, 'upstream_card_unreachable']);
          const imported = await t.http().post(`${path}/import-card`).set(bearer(org));
          expect([imported.status, imported.body.code]).toEqual([422, 'upstream_card_unreachable']);
        }
      } finally {
        await new Promise((resolve) => server.close(resolve));
      }
    });
  });

  describe('forwarding', () => {
    it("a blocking send through the service gets the upstream's answer; the upstream sees its own credential, never the requester's key", async () => {
      const before = upstream.received.length;
      const request = say('hello upstream');
      const task = (await client.sendMessage(request)) as Task;
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(textOf(task.status?.message)).toBe('done: hello upstream');
      expect(task.artifacts).toEqual([expect.objectContaining({ artifactId: 'echo', name: 'echo.txt' })]);
      const seen = upstream.received.slice(before);
      expect(seen).toHaveLength(1);
      expect(seen[0]).toMatchObject({ messageId: request.message!.messageId, text: 'hello upstream' });
      expect(seen[0].headers.authorization).toBe(`Bearer ${SECRET}`);
      expect(JSON.stringify(seen[0].headers)).not.toContain(requester.key);
      // The ledger keeps the upstream's task id; the REST view shows the whole conversation.
      const [row] = (await t.db.query(`SELECT upstream_task_id FROM tasks WHERE id = $1`, [task.id])) as Array<{
        upstream_task_id: string;
      }>;
      expect(row.upstream_task_id).toBe(seen[0].taskId);
    });

    it("a stream through the service shows working, the artifact and completion, as a REST worker's would", async () => {
      const events: StreamResponse[] = [];
      for await (const event of client.sendMessageStream(say('stream it'))) {
        events.push(event);
      }
      const kinds = events.map((e) =>
        e.payload?.$case === 'statusUpdate' ? `status:${e.payload.value.status?.state}` : e.payload?.$case,
      );
      expect(kinds).toEqual([
        'task',
        `status:${TaskState.TASK_STATE_WORKING}`,
        'artifactUpdate',
        `status:${TaskState.TASK_STATE_COMPLETED}`,
      ]);
      const artifact = events.find((e) => e.payload?.$case === 'artifactUpdate')!.payload as unknown as {
        value: { artifact: Parameters<typeof textOf>[0] };
      };
      expect(textOf(artifact.value.artifact)).toBe('echo: stream it');
    });

    it.each(['HTTP+JSON', 'GRPC'] as const)(
      "a requester speaking %s to the bridged identity gets the upstream's answer and stream",
      async (binding) => {
        const other = await requesterClient(t, requester, bridged, binding);
        const before = upstream.received.length;
        const request = say(`over ${binding}`);
        const task = (await other.sendMessage(request)) as Task;
        expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
        expect(textOf(task.status?.message)).toBe(`done: over ${binding}`);
        expect(task.artifacts).toEqual([expect.objectContaining({ artifactId: 'echo', name: 'echo.txt' })]);
        expect(upstream.received.slice(before)).toEqual([
          expect.objectContaining({ messageId: request.message!.messageId }),
        ]);
        const kinds: string[] = [];
        for await (const event of other.sendMessageStream(say(`stream over ${binding}`))) {
          kinds.push(
            event.payload?.$case === 'statusUpdate'
              ? `status:${event.payload.value.status?.state}`
              : String(event.payload?.$case),
          );
        }
        expect(kinds).toEqual([
          'task',
          `status:${TaskState.TASK_STATE_WORKING}`,
          'artifactUpdate',
          `status:${TaskState.TASK_STATE_COMPLETED}`,
        ]);
      },
    );

    it('input-required waits for the requester; the follow-up reaches the same upstream task', async () => {
      const first = (await client.sendMessage(say('ask for money'))) as Task;
      expect(first.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
      expect(textOf(first.status?.message)).toBe('Which currency?');
      const before = upstream.received.length;
      const second = (await client.sendMessage(say('EUR', { taskId: first.id, contextId: first.contextId }))) as Task;
      expect(second.id).toBe(first.id);
      expect(second.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(textOf(second.status?.message)).toBe('done: EUR');
      const turns = upstream.received.filter((r) => r.taskId === upstream.received[before].taskId);
      expect(turns.map((r) => r.text)).toEqual(['ask for money', 'EUR']);
    });

    it('a cancel reaches the upstream task', async () => {
      const res = await rpc(t, bridged.handle, requester.key, 'message/send', {
        message: v03Message('slow work'),
        configuration: { blocking: false },
      }).expect(200);
      const taskId = res.body.result.id as string;
      await eventually(
        async () => (await t.db.query(`SELECT state, upstream_task_id FROM tasks WHERE id = $1`, [taskId]))[0],
        (row: { state: string; upstream_task_id: string | null }) =>
          row.state === 'working' && row.upstream_task_id !== null,
      );
      const canceled = await client.cancelTask({ tenant: '', id: taskId, metadata: undefined });
      expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
      const [row] = (await t.db.query(`SELECT upstream_task_id FROM tasks WHERE id = $1`, [taskId])) as Array<{
        upstream_task_id: string;
      }>;
      await eventually(
        async () => upstream.cancels,
        (cancels) => cancels.includes(row.upstream_task_id),
      );
    });

    it('an upstream that is down is retried, and the task completes once it is back', async () => {
      await upstream.stop();
      const res = await rpc(t, bridged.handle, requester.key, 'message/send', {
        message: v03Message('are you there'),
        configuration: { blocking: false },
      }).expect(200);
      const taskId = res.body.result.id as string;
      await eventually(
        async () =>
          (await t.db.query(`SELECT attempts, last_error FROM upstream_forwards WHERE task_id = $1`, [taskId]))[0],
        (row: { attempts: number; last_error: string | null }) =>
          row.attempts >= 2 && row.last_error === 'the connection was refused',
      );
      await upstream.start();
      const done = await eventually(
        () =>
          t
            .http()
            .get(`/api/v1/tasks/${taskId}`)
            .set(apiKey(requester.key))
            .then((r) => r.body),
        (task: { status: { state: string; message: { parts: Array<{ text: string }> } } }) =>
          task.status.state === 'completed',
      );
      expect(done.status.message.parts).toEqual([{ kind: 'text', text: 'done: are you there' }]);
      expect(upstream.received.filter((r) => r.text === 'are you there')).toHaveLength(1);
    });

    it('without streaming (no card read): a blocking send to the upstream, whose answer completes the task', async () => {
      const plain = await enabledAgent(t, acme);
      const set = await t
        .http()
        .put(`/api/v1/identities/${plain.handle}/upstream`)
        .set(bearer(acme))
        .send({ url: upstream.url, protocol_version: '1.0', binding: 'JSONRPC' })
        .expect(200);
      expect(set.body.streaming).toBe(false);
      const quick = await rpc(t, plain.handle, requester.key, 'message/send', { message: v03Message('plain') }).expect(
        200,
      );
      expect(quick.body.result).toMatchObject({
        status: { state: 'completed', message: { parts: [{ kind: 'text', text: 'done: plain' }] } },
      });
      expect(quick.body.result.artifacts).toEqual([
        expect.objectContaining({ artifactId: 'echo', parts: [{ kind: 'text', text: 'echo: plain' }] }),
      ]);

      // A long task: the forwarder's blocking call waits for the upstream's answer.
      const message = v03Message('slow plain');
      const slow = await rpc(t, plain.handle, requester.key, 'message/send', {
        message,
        configuration: { blocking: false },
      }).expect(200);
      await eventually(
        async () => upstream.received.find((r) => r.messageId === message.messageId),
        (r) => r !== undefined,
      );
      upstream.release(upstream.received.find((r) => r.messageId === message.messageId)!.taskId);
      await eventually(
        () =>
          t
            .http()
            .get(`/api/v1/tasks/${slow.body.result.id}`)
            .set(apiKey(requester.key))
            .then((r) => r.body.status.state as string),
        (state) => state === 'completed',
      );
    });

    it('speaks A2A 0.3 to an agent whose card offers only 0.3', async () => {
      const legacy = await startUpstreamAgent(await freePort(), { version: '0.3' });
      try {
        const old = await enabledAgent(t, acme);
        const set = await t
          .http()
          .put(`/api/v1/identities/${old.handle}/upstream`)
          .set(bearer(acme))
          .send({ url: legacy.url })
          .expect(200);
        expect(set.body).toMatchObject({ protocol_version: '0.3', binding: 'JSONRPC', streaming: true });
        const res = await rpc(t, old.handle, requester.key, 'message/send', { message: v03Message('hola') }).expect(
          200,
        );
        expect(res.body.result).toMatchObject({
          status: { state: 'completed', message: { parts: [{ kind: 'text', text: 'done: hola' }] } },
        });
        expect(res.body.result.artifacts).toEqual([
          expect.objectContaining({ artifactId: 'echo', parts: [{ kind: 'text', text: 'echo: hola' }] }),
        ]);
        expect(legacy.received).toEqual([expect.objectContaining({ text: 'hola', version: '0.3' })]);
      } finally {
        await legacy.close();
      }
    });

    it('an upstream that stays unreachable fails the task with the reason, never its address', async () => {
      const gone = await enabledAgent(t, acme);
      const port = await freePort();
      await t
        .http()
        .put(`/api/v1/identities/${gone.handle}/upstream`)
        .set(bearer(acme))
        .send({ url: `http://127.0.0.1:${port}/a2a`, protocol_version: '1.0', binding: 'JSONRPC' })
        .expect(200);
      const res = await rpc(t, gone.handle, requester.key, 'message/send', {
        message: v03Message('anyone?'),
        configuration: { blocking: false },
      }).expect(200);
      const failed = await eventually(
        () =>
          t
            .http()
            .get(`/api/v1/tasks/${res.body.result.id}`)
            .set(apiKey(requester.key))
            .then((r) => r.body),
        (task: { status: { state: string; message: { parts: Array<{ text: string }> } } }) =>
          task.status.state === 'failed',
        30_000,
      );
      const reason = failed.status.message.parts[0].text;
      expect(reason).toBe('The upstream agent could not be reached: the connection was refused.');
      expect(reason).not.toContain('127.0.0.1');
    });
  });

  describe.each([
    ['HTTP+JSON', '1.0'],
    ['GRPC', '1.0'],
    ['HTTP+JSON', '0.3'],
    ['GRPC', '0.3'],
  ] as const)('forwarding to an upstream whose card offers only %s (A2A %s)', (binding, version) => {
    let agent: UpstreamAgent;
    let bridgedThere: Agent;

    beforeAll(async () => {
      agent = await startUpstreamAgent(await freePort(), {
        binding,
        version,
        grpcPort: binding === 'GRPC' ? await freePort() : undefined,
      });
      bridgedThere = await enabledAgent(t, acme);
    });
    afterAll(() => agent.close());

    it("is set from the card: the binding, and the interface's endpoint", async () => {
      const set = await t
        .http()
        .put(`/api/v1/identities/${bridgedThere.handle}/upstream`)
        .set(bearer(acme))
        .send({ url: agent.base, auth: { type: 'bearer', value: SECRET } })
        .expect(200);
      expect(set.body).toMatchObject({
        binding,
        protocol_version: version,
        streaming: true,
        card_url: agent.cardUrl,
        url: binding === 'GRPC' ? `http://${agent.endpoint}/` : agent.endpoint,
      });
      // The card read again from where it was found.
      await t
        .http()
        .post(`/api/v1/identities/${bridgedThere.handle}/upstream/import-card`)
        .set(bearer(acme))
        .expect(200);
    });

    it('a blocking send and a stream are forwarded over it; the upstream sees its own credential', async () => {
      const request = say('hello there');
      const other = await requesterClient(t, requester, bridgedThere);
      const task = (await other.sendMessage(request)) as Task;
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(textOf(task.status?.message)).toBe('done: hello there');
      expect(task.artifacts).toEqual([expect.objectContaining({ artifactId: 'echo', name: 'echo.txt' })]);
      expect(agent.received).toEqual([
        expect.objectContaining({ messageId: request.message!.messageId, text: 'hello there' }),
      ]);
      expect(agent.received[0].headers.authorization).toBe(`Bearer ${SECRET}`);
      expect(JSON.stringify(agent.received[0].headers)).not.toContain(requester.key);
      const kinds: string[] = [];
      for await (const event of other.sendMessageStream(say('stream it'))) {
        kinds.push(
          event.payload?.$case === 'statusUpdate'
            ? `status:${event.payload.value.status?.state}`
            : String(event.payload?.$case),
        );
      }
      expect(kinds).toEqual([
        'task',
        `status:${TaskState.TASK_STATE_WORKING}`,
        'artifactUpdate',
        `status:${TaskState.TASK_STATE_COMPLETED}`,
      ]);
    });

    it('a cancel is forwarded over it', async () => {
      const res = await rpc(t, bridgedThere.handle, requester.key, 'message/send', {
        message: v03Message('slow work'),
        configuration: { blocking: false },
      }).expect(200);
      const taskId = res.body.result.id as string;
      const row = await eventually(
        async () => (await t.db.query(`SELECT state, upstream_task_id FROM tasks WHERE id = $1`, [taskId]))[0],
        (r: { state: string; upstream_task_id: string | null }) => r.state === 'working' && r.upstream_task_id !== null,
      );
      await rpc(t, bridgedThere.handle, requester.key, 'tasks/cancel', { id: taskId })
        .expect(200)
        .expect((r) => expect(r.body.result.status.state).toBe('canceled'));
      await eventually(
        async () => agent.cancels,
        (cancels) => cancels.includes(row.upstream_task_id!),
      );
    });

    it('an upstream that is down is retried over it, and the task completes once it is back', async () => {
      await agent.stop();
      const res = await rpc(t, bridgedThere.handle, requester.key, 'message/send', {
        message: v03Message('are you there'),
        configuration: { blocking: false },
      }).expect(200);
      const taskId = res.body.result.id as string;
      const row = await eventually(
        async () =>
          (await t.db.query(`SELECT attempts, last_error FROM upstream_forwards WHERE task_id = $1`, [taskId]))[0],
        (r: { attempts: number; last_error: string | null }) => r.attempts >= 2 && r.last_error !== null,
      );
      expect(row.last_error).toBe(
        binding === 'GRPC' ? 'it is unavailable (the connection was refused or lost)' : 'the connection was refused',
      );
      await agent.start();
      const done = await eventually(
        () =>
          t
            .http()
            .get(`/api/v1/tasks/${taskId}`)
            .set(apiKey(requester.key))
            .then((r) => r.body),
        (task: { status: { state: string; message: { parts: unknown[] } } }) => task.status.state === 'completed',
      );
      expect(done.status.message.parts).toEqual([{ kind: 'text', text: 'done: are you there' }]);
      expect(agent.received.filter((r) => r.text === 'are you there')).toHaveLength(1);
    });
  });
});

describe('forwarding with two service instances', () => {
  let a: TestApp;
  let b: TestApp;
  let upstream: UpstreamAgent;

  beforeAll(async () => {
    const env = { WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true', EVENTS_POLL_INTERVAL_MS: '20', UPSTREAM_LEASE_MS: '1500' };
    a = await startApp(env);
    b = await startApp(env, a);
    upstream = await startUpstreamAgent(await freePort());
  });
  afterAll(async () => {
    await b.close();
    await a.close();
    await upstream.close();
  });

  it('each message reaches the upstream exactly once', async () => {
    const { acme, requester, worker: bridged } = await agentPair(a);
    await a
      .http()
      .put(`/api/v1/identities/${bridged.handle}/upstream`)
      .set(bearer(acme))
      .send({ url: upstream.url })
      .expect(200);
    const sent: string[] = [];
    await Promise.all(
      Array.from({ length: 10 }, async (_, i) => {
        const via = i % 2 === 0 ? a : b;
        const message = v03Message(`job ${i}`);
        sent.push(message.messageId);
        await rpc(via, bridged.handle, requester.key, 'message/send', {
          message,
          configuration: { blocking: false },
        }).expect(200);
      }),
    );
    await eventually(
      async () =>
        (
          await a.db.query(
            `SELECT count(*)::int AS n FROM tasks WHERE worker_identity_id = $1 AND state = 'completed'`,
            [bridged.id],
          )
        )[0].n,
      (n: number) => n === 10,
    );
    const ids = upstream.received.map((r) => r.messageId).filter((id) => sent.includes(id));
    expect(ids.sort()).toEqual([...sent].sort());
  });

  it('messages queued where no forwarder runs are claimed by the other instance; with those it forwards itself, each reaches the upstream once', async () => {
    const { acme, requester, worker: bridged } = await agentPair(a);
    await a
      .http()
      .put(`/api/v1/identities/${bridged.handle}/upstream`)
      .set(bearer(acme))
      .send({ url: upstream.url })
      .expect(200);
    // A queues without claiming (it forwards nothing); B claims A's and forwards its own from its sends.
    await a.app.get(UpstreamForwarder).stop();
    try {
      const sent = Array.from({ length: 10 }, (_, i) => v03Message(`job ${i}`));
      await Promise.all(
        sent.map((message, i) =>
          rpc(i % 2 === 0 ? a : b, bridged.handle, requester.key, 'message/send', {
            message,
            configuration: { blocking: false },
          }).expect(200),
        ),
      );
      await eventually(
        async () =>
          (
            await a.db.query(
              `SELECT count(*)::int AS n FROM tasks WHERE worker_identity_id = $1 AND state = 'completed'`,
              [bridged.id],
            )
          )[0].n,
        (n: number) => n === 10,
      );
      const ids: string[] = sent.map((message) => message.messageId);
      expect(
        upstream.received
          .map((r) => r.messageId)
          .filter((id) => ids.includes(id))
          .sort(),
      ).toEqual(ids.sort());
      // Each forward finishes just after its task's last write; each took one attempt, by one forwarder.
      const forwards = await eventually(
        () =>
          a.db.query(
            `SELECT f.status, f.attempts FROM upstream_forwards f JOIN tasks t ON t.id = f.task_id WHERE t.worker_identity_id = $1`,
            [bridged.id],
          ) as Promise<Array<{ status: string; attempts: number }>>,
        (rows) => rows.every((row) => row.status !== 'pending'),
      );
      expect(forwards).toEqual(Array.from({ length: 10 }, () => ({ status: 'succeeded', attempts: 1 })));
    } finally {
      a.app.get(UpstreamForwarder).start();
    }
  });

  it('a forwarder that stops mid-forward leaves it to another, which follows the upstream task without sending the message again', async () => {
    const { acme, requester, worker: bridged } = await agentPair(a);
    await a
      .http()
      .put(`/api/v1/identities/${bridged.handle}/upstream`)
      .set(bearer(acme))
      .send({ url: upstream.url })
      .expect(200);
    await b.app.get(UpstreamForwarder).stop();
    const message = v03Message('slow and steady');
    const res = await rpc(a, bridged.handle, requester.key, 'message/send', {
      message,
      configuration: { blocking: false },
    }).expect(200);
    const taskId = res.body.result.id as string;
    // A has forwarded it and follows the upstream's stream: the task is working there.
    await eventually(
      async () => (await a.db.query(`SELECT state FROM tasks WHERE id = $1`, [taskId]))[0].state,
      (state: string) => state === 'working',
    );
    await a.app.get(UpstreamForwarder).stop(); // as if A died: its claim stays until the lease runs out
    b.app.get(UpstreamForwarder).start();
    await eventually(
      async () => (await a.db.query(`SELECT attempts FROM upstream_forwards WHERE task_id = $1`, [taskId]))[0].attempts,
      (n: number) => n === 2,
    );
    upstream.release(upstream.received.find((r) => r.messageId === message.messageId)!.taskId);
    const done = await eventually(
      () =>
        a
          .http()
          .get(`/api/v1/tasks/${taskId}`)
          .set(apiKey(requester.key))
          .then((r) => r.body),
      (task: { status: { state: string }; artifacts: unknown[] }) => task.status.state === 'completed',
    );
    expect(done.artifacts).toEqual([expect.objectContaining({ artifactId: 'echo' })]);
    expect(upstream.received.filter((r) => r.messageId === message.messageId)).toHaveLength(1);
    // The forward finishes just after the task's last write (as in the test above): waited for, not raced.
    const forward = await eventually(
      async () =>
        (
          (await a.db.query(`SELECT status, accepted, attempts FROM upstream_forwards WHERE task_id = $1`, [
            taskId,
          ])) as Array<{ status: string }>
        )[0],
      (row) => row.status !== 'pending',
    );
    expect(forward).toEqual({ status: 'succeeded', accepted: true, attempts: 2 });
  });
});
