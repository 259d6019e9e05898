import { randomUUID } from 'node:crypto';
import { SendMessageRequest, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import { status as GrpcStatus } from '@grpc/grpc-js';
import type { TestApp } from '../support/app';
import { enabledAgent, openStream, reply, rpc, v03Message, v1Message, type Agent } from '../support/a2a';
import { EVERY_BINDING, sdkClient, startAppForCards, type Binding } from '../support/a2a-sdk';
import { grpcClient, metadataOf, unary } from '../support/grpc';
import { apiKey, bearer, createEnabledIdentity, signup, type ConsoleAccount } from '../support/fixtures';
import { statementsFor } from '../support/statements';

/**
 * Per-skill policy on every binding (docs/api.md §16): a message names the skill it
 * calls in its metadata under the skill extension's URI; contact rules about that skill
 * beat rules without skills; a skill the worker's card lacks, or none where the worker
 * requires one, is invalid params; the task keeps its skill; the extended card shows an
 * `admitted` skill only to a caller admitted to it.
 */
const SKILLS = [
  { id: 'translate', name: 'Translate', description: 'Into any language.', tags: ['language'] },
  { id: 'summarize', name: 'Summarize', description: 'Shorter.', tags: ['language'] },
  { id: 'audit', name: 'Audit', description: 'For partners only.', tags: ['books'], visibility: 'admitted' },
];

/** What every binding's refusal of a call admission denies says (its form differs: below). */
const NOT_ADMITTED = 'This call is not admitted between these two identities.';

describe('per-skill policy', () => {
  let t: TestApp;
  let acme: ConsoleAccount;
  let worker: Agent;
  /** Allowed by the worker without skills, but blocked for `summarize`. */
  let trusted: Agent;
  /** Blocked by the worker without skills, but allowed for `translate`. */
  let partner: Agent;
  let uri: string;

  const rule = (body: object) =>
    t
      .http()
      .post('/api/v1/contact-rules')
      .set(bearer(acme))
      .send({ identity: worker.handle, direction: 'inbound', ...body })
      .expect(201);
  const naming = (skill: string | null, text = 'work') => ({
    ...(skill === null ? {} : { metadata: { [uri]: skill } }),
    text,
  });
  const send = (client: Client, { text, metadata }: { text: string; metadata?: object }) =>
    client.sendMessage(
      SendMessageRequest.fromJSON({
        message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }], metadata },
        configuration: { returnImmediately: true },
      }),
    ) as Promise<Task>;
  const taskView = async (id: string) =>
    (await t.http().get(`/api/v1/tasks/${id}`).set(apiKey(worker.key)).expect(200)).body;

  beforeAll(async () => {
    // The SDK's v0.3 HTTP+JSON client cannot ask not to block (proto JSON leaves `blocking: false` out): do not wait long.
    t = await startAppForCards({ PROTOCOL_BLOCKING_TIMEOUT_MS: '100' });
    acme = await signup(t, 'Acme Skills');
    const globex = await signup(t, 'Globex Skills');
    const created = await createEnabledIdentity(t, acme, { skills: SKILLS });
    worker = { id: created.id, handle: created.handle, key: created.key };
    trusted = await enabledAgent(t, globex, { filterMode: 'blacklist' });
    partner = await enabledAgent(t, globex, { filterMode: 'blacklist' });
    const peer = (agent: Agent) => ({ type: 'identity', handle: agent.handle });
    await rule({ action: 'allow', peer: peer(trusted) });
    await rule({ action: 'block', peer: peer(trusted), skills: ['summarize'] });
    await rule({ action: 'block', peer: peer(partner) });
    await rule({ action: 'allow', peer: peer(partner), skills: ['translate'] });
    const card = (await t.http().get(`/a2a/${worker.handle}/card`).set('A2A-Version', '1.0').expect(200)).body;
    uri = card.capabilities.extensions[0].uri;
  });
  afterAll(() => t.close());

  it('every card declares the skill extension, a URI of this service, in both generations', async () => {
    expect(uri).toBe(`${t.config.publicBaseUrl}/extensions/skill/v1`);
    const v03 = (await t.http().get(`/a2a/${worker.handle}/card`).expect(200)).body;
    expect(v03.capabilities.extensions).toEqual([{ uri, description: expect.stringContaining('metadata') }]);
  });

  describe.each(EVERY_BINDING)('%s, A2A %s, through the official SDK client', (binding: Binding, version) => {
    let asTrusted: Client;
    let asPartner: Client;

    beforeAll(async () => {
      ({ client: asTrusted } = await sdkClient(t, trusted, worker, binding, version));
      ({ client: asPartner } = await sdkClient(t, partner, worker, binding, version));
    });

    it('a rule for the named skill beats a rule without skills, both ways; the task keeps the skill', async () => {
      const translated = await send(asTrusted, naming('translate'));
      expect(await taskView(translated.id)).toMatchObject({
        skill: 'translate',
        worker: { agent_handle: worker.handle },
      });
      const plain = await send(asTrusted, naming(null));
      expect((await taskView(plain.id)).skill).toBeNull();
      await expect(send(asTrusted, naming('summarize'))).rejects.toThrow(NOT_ADMITTED);

      const allowed = await send(asPartner, naming('translate'));
      expect((await taskView(allowed.id)).skill).toBe('translate');
      await expect(send(asPartner, naming(null))).rejects.toThrow(NOT_ADMITTED);
      await expect(send(asPartner, naming('summarize'))).rejects.toThrow(NOT_ADMITTED);
    });

    it('a skill the card does not have is invalid params, saying so', async () => {
      const refused = send(asTrusted, naming('juggle'));
      await expect(refused).rejects.toThrow(`${worker.handle}'s card has no skill 'juggle'`);
      // The SDK's own reading of the binding's error: invalid params (-32602, INVALID_ARGUMENT).
      await expect(refused).rejects.toBeInstanceOf(RequestMalformedError);
    });

    it('a worker that requires a skill refuses a message naming none as invalid params; the identity shows it', async () => {
      const settings = (body: object) =>
        t.http().patch(`/api/v1/identities/${worker.handle}/settings`).set(bearer(acme)).send(body).expect(200);
      expect((await settings({ require_skill: true })).body.require_skill).toBe(true);
      try {
        await expect(send(asTrusted, naming(null))).rejects.toThrow('requires every message to name a skill');
        expect((await send(asTrusted, naming('translate'))).id).toEqual(expect.any(String));
      } finally {
        await settings({ require_skill: false });
      }
    });

    it('the extended card shows an admitted skill only to a caller admitted to it', async () => {
      const ids = async (client: Client) => (await client.getAgentCard()).skills.map((skill) => skill.id);
      expect(await ids(asTrusted)).toEqual(['translate', 'summarize', 'audit']);
      expect(await ids(asPartner)).toEqual(['translate', 'summarize']);
    });
  });

  describe('the refusals in each binding’s form', () => {
    it('JSON-RPC: admission_denied (403) for the skill, -32602 with the reason for a skill the card lacks', async () => {
      for (const [method, version, message] of [
        ['message/send', '0.3', v03Message] as const,
        ['SendMessage', '1.0', v1Message] as const,
      ]) {
        const params = (skill: string) => ({ message: message('hi', { metadata: { [uri]: skill } }) });
        const denied = await rpc(t, worker.handle, trusted.key, method, params('summarize'), version).expect(403);
        expect(denied.body.error.data.reason).toBe('admission_denied');
        const unknown = await rpc(t, worker.handle, trusted.key, method, params('juggle'), version).expect(200);
        expect(unknown.body.error).toMatchObject({
          code: -32602,
          message: expect.stringContaining("no skill 'juggle'"),
        });
        const malformed = await rpc(t, worker.handle, trusted.key, method, params(5 as never), version).expect(200);
        expect(malformed.body.error).toMatchObject({ code: -32602, message: expect.stringContaining(uri) });
      }
      // A stream is refused before its first event, as the checks refuse it.
      const stream = await openStream(t.baseUrl, worker.handle, trusted.key, 'message/stream', {
        message: v03Message('hi', { metadata: { [uri]: 'summarize' } }),
      });
      expect(stream.response.status).toBe(403);
      expect(((await stream.response.json()) as { error: { data: { reason: string } } }).error.data.reason).toBe(
        'admission_denied',
      );
    });

    it('HTTP+JSON: 403 admission_denied, 400 INVALID_ARGUMENT with the reason', async () => {
      const post = (skill: string) =>
        t
          .http()
          .post(`/a2a/${worker.handle}/rest/message:send`)
          .set({ ...apiKey(trusted.key), 'A2A-Version': '1.0' })
          .send({
            message: v1Message('hi', { metadata: { [uri]: skill } }),
            configuration: { returnImmediately: true },
          });
      expect((await post('summarize').expect(403)).body).toMatchObject({ code: 'admission_denied' });
      const unknown = await post('juggle').expect(400);
      expect(unknown.body.error).toMatchObject({
        status: 'INVALID_ARGUMENT',
        message: expect.stringContaining('juggle'),
      });
    });

    it('gRPC: PERMISSION_DENIED (admission_denied), INVALID_ARGUMENT with the reason', async () => {
      const client = grpcClient(t);
      try {
        const send = (skill: string) =>
          unary(
            client,
            'sendMessage',
            SendMessageRequest.fromJSON({
              tenant: worker.handle,
              message: v1Message('hi', { metadata: { [uri]: skill } }),
              configuration: { returnImmediately: true },
            }),
            metadataOf(apiKey(trusted.key)),
          );
        expect(await send('summarize')).toMatchObject({
          code: GrpcStatus.PERMISSION_DENIED,
          reason: 'admission_denied',
        });
        expect(await send('juggle')).toMatchObject({
          code: GrpcStatus.INVALID_ARGUMENT,
          details: expect.stringContaining("no skill 'juggle'"),
        });
      } finally {
        client.close();
      }
    });
  });

  it('a send naming a skill makes the round trips of one naming none: its pair read once, kept, its skill decided from it', async () => {
    const statements = async (skill: string | null) => {
      const stop = statementsFor(t, trusted.key);
      await rpc(t, worker.handle, trusted.key, 'message/send', {
        message: v03Message('count', skill ? { metadata: { [uri]: skill } } : {}),
        configuration: { blocking: false },
      }).expect(200);
      return stop();
    };
    await statements(null); // the pair is read, and kept at admission's version
    const none = await statements(null);
    const named = await statements('translate');
    expect(named).toEqual(none);
    expect(named.filter((statement) => /^\s*WITH asked AS/.test(statement))).toEqual([]);
  });

  it("a message continuing a task names the task's skill", async () => {
    const params = (skill: string | null, taskId?: string) => ({
      message: v03Message('more', { ...(taskId ? { taskId } : {}), ...(skill ? { metadata: { [uri]: skill } } : {}) }),
      configuration: { blocking: false },
    });
    const task = (await rpc(t, worker.handle, trusted.key, 'message/send', params('translate')).expect(200)).body
      .result;
    const none = await rpc(t, worker.handle, trusted.key, 'message/send', params(null, task.id)).expect(200);
    expect(none.body.error).toMatchObject({ code: -32602, message: expect.stringContaining('translate') });
    const same = await rpc(t, worker.handle, trusted.key, 'message/send', params('translate', task.id)).expect(200);
    expect(same.body.result.id).toBe(task.id);
  });

  it('an ask rule for a skill holds only the tasks naming that skill for approval', async () => {
    const ask = await rule({
      action: 'ask',
      peer: { type: 'identity', handle: trusted.handle },
      skills: ['translate'],
    });
    try {
      const state = async (skill: string | null) => {
        const message = v03Message('please', skill ? { metadata: { [uri]: skill } } : {});
        const sent = await rpc(t, worker.handle, trusted.key, 'message/send', {
          message,
          configuration: { blocking: false },
        }).expect(200);
        return sent.body.result.status.state as string;
      };
      expect(await state('translate')).toBe('auth-required');
      expect(await state(null)).toBe('submitted');
    } finally {
      await t.http().delete(`/api/v1/contact-rules/${ask.body.id}`).set(bearer(acme)).expect(204);
    }
  });

  it('approving always a request that a skill-specific ask rule opened answers that skill from then on', async () => {
    const ask = await rule({
      action: 'ask',
      peer: { type: 'identity', handle: partner.handle },
      skills: ['summarize'],
    });
    const remembered: string[] = [ask.body.id];
    try {
      const state = async () => {
        const sent = await rpc(t, worker.handle, partner.key, 'message/send', {
          message: v03Message('please', { metadata: { [uri]: 'summarize' } }),
          configuration: { blocking: false },
        }).expect(200);
        return sent.body.result.status.state as string;
      };
      expect(await state()).toBe('auth-required');
      const [approval] = (
        await t.http().get(`/api/v1/approvals?state=pending&identity=${worker.handle}`).set(bearer(acme)).expect(200)
      ).body.approvals as Array<{ id: string }>;
      await t
        .http()
        .post(`/api/v1/approvals/${approval.id}/approve`)
        .set(bearer(acme))
        .send({ remember: 'always' })
        .expect(200);
      const rules = (
        await t.http().get(`/api/v1/contact-rules?identity=${worker.handle}`).set(bearer(acme)).expect(200)
      ).body.rules as Array<{ id: string; action: string; skills: string[]; peer: { handle: string | null } }>;
      const written = rules.filter((r) => r.peer.handle === partner.handle && r.action === 'allow');
      expect(written.map((r) => r.skills)).toContainEqual(['summarize']);
      remembered.push(...written.filter((r) => r.skills.includes('summarize')).map((r) => r.id));
      // The rule that asked was the owner's rule for that peer, direction and skills: it now allows.
      expect(written.map((r) => r.id)).toContain(ask.body.id);
      // The person's answer sticks: the next task naming the skill is not asked about again.
      expect(await state()).toBe('submitted');
    } finally {
      for (const id of new Set(remembered)) {
        await t.http().delete(`/api/v1/contact-rules/${id}`).set(bearer(acme)).expect(204);
      }
    }
  });

  it('an open stream is asked about its skill: a block of that skill ends it as admission_denied', async () => {
    const stream = await openStream(t.baseUrl, worker.handle, trusted.key, 'message/stream', {
      message: v03Message('long', { metadata: { [uri]: 'translate' } }),
    });
    const first = await stream.next();
    const taskId = first!.body.result.id as string;
    const block = await rule({
      action: 'block',
      peer: { type: 'identity', handle: trusted.handle },
      skills: ['translate'],
    });
    try {
      await reply(t, taskId, worker.key, { state: 'working' }).expect(200);
      const last = await stream.next();
      expect(last?.body.error.data.reason).toBe('admission_denied');
    } finally {
      await t.http().delete(`/api/v1/contact-rules/${block.body.id}`).set(bearer(acme)).expect(204);
      stream.close();
    }
  });

  it('the task list filters by skill; check and the recorded denials show the skill', async () => {
    const listed = await t
      .http()
      .get('/api/v1/tasks')
      .query({ skill: 'translate', role: 'worker' })
      .set(apiKey(worker.key))
      .expect(200);
    expect(listed.body.tasks.length).toBeGreaterThan(0);
    expect(new Set(listed.body.tasks.map((task: { skill: string }) => task.skill))).toEqual(new Set(['translate']));

    const check = (skill?: string) =>
      t
        .http()
        .post('/api/v1/admission/check')
        .set(bearer(acme))
        .send({ requester: trusted.handle, worker: worker.handle, ...(skill ? { skill } : {}) })
        .expect(200);
    expect((await check('summarize')).body).toMatchObject({
      allowed: false,
      skill: 'summarize',
      reason: 'blocked_by_worker',
      rules: [expect.objectContaining({ action: 'block', skills: ['summarize'] })],
    });
    expect((await check()).body).toMatchObject({ allowed: true, skill: null, reason: 'mutual_permit' });

    const decisions = await t
      .http()
      .get('/api/v1/admission/decisions')
      .query({ identity: worker.handle })
      .set(bearer(acme))
      .expect(200);
    expect(decisions.body.decisions).toContainEqual(
      expect.objectContaining({ requester: expect.objectContaining({ handle: trusted.handle }), skill: 'summarize' }),
    );
    expect(decisions.body.decisions).toContainEqual(
      expect.objectContaining({ requester: expect.objectContaining({ handle: partner.handle }), skill: null }),
    );
  });
});
