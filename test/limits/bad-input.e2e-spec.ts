import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import pino from 'pino';
import { startApp, type TestApp } from '../support/app';
import { logEntries } from '../support/log-entries';
import { agentPair, reply, submitTask, v03Message, v1Message, type Agent } from '../support/a2a';
import { deepJson } from '../support/grpc';
import {
  apiKey,
  bearer,
  createIdentity,
  mintAdminKey,
  PASSWORD,
  unique,
  type ConsoleAccount,
} from '../support/fixtures';

/**
 * docs/api.md §9: bad input is a 400 naming the field, never a 500. These are the shapes
 * an outside tester found getting past validation: an array (or an array of arrays)
 * where an object is expected, and the keys Nest strips silently instead of refusing.
 */
describe('bad input is a 400, never a 500', () => {
  let t: TestApp;
  let acme: ConsoleAccount;
  let admin: string;
  let requester: Agent;
  let worker: Agent;
  /** The lines the app logged at warn or above. */
  const logged: Array<Record<string, unknown>> = [];

  beforeAll(async () => {
    t = await startApp({}, undefined, pino({ level: 'warn' }, logEntries(logged)));
    ({ acme, requester, worker } = await agentPair(t));
    admin = await mintAdminKey(t, acme);
  });
  afterAll(() => t.close());

  const expectFieldError = (res: { status: number; body: any }, field: string) => {
    expect({ status: res.status, code: res.body.code }).toEqual({ status: 400, code: 'validation_failed' });
    expect(res.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
  };

  describe('an array where an object is expected', () => {
    it.each([[[[]]], [[[{}]]], [[null]], [['x']]])('agent signup (no credential) with skills %j', async (skills) => {
      const res = await t
        .http()
        .post('/api/v1/agent-signup')
        .send({ agent_handle: unique('x'), skills });
      expectFieldError(res, 'skills');
    });

    it('identity create and PATCH with skills [[]]', async () => {
      expectFieldError(
        await t
          .http()
          .post('/api/v1/identities')
          .set(apiKey(admin))
          .send({ agent_handle: unique('agent'), skills: [[]] }),
        'skills',
      );
      const identity = await createIdentity(t, bearer(acme));
      expectFieldError(
        await t
          .http()
          .patch(`/api/v1/identities/${identity.agent_handle}`)
          .set(bearer(acme))
          .send({ skills: [[]] }),
        'skills',
      );
      expectFieldError(
        await t
          .http()
          .patch(`/api/v1/identities/${identity.agent_handle}`)
          .set(apiKey(admin))
          .send({ skills: [[[]]] }),
        'skills',
      );
    });

    it.each([
      ['message', { message: [] }],
      ['message', { message: [[]] }],
      ['message', { message: [{ parts: [{ kind: 'text', text: 'x' }] }] }],
      ['artifacts', { artifacts: [[]] }],
      ['artifacts', { artifacts: [[{ parts: [{ kind: 'text', text: 'x' }] }]] }],
    ])('the reply with %s %j', async (field, body) => {
      const task = await submitTask(t, requester, worker);
      expectFieldError(await reply(t, task.id, worker.key, body), field);
      // The task is untouched and still answers.
      const after = await t.http().get(`/api/v1/tasks/${task.id}`).set(apiKey(worker.key)).expect(200);
      expect(after.body.status.state).toBe('submitted');
    });

    it('a contact rule with peer [] or [[]]', async () => {
      for (const peer of [[], [[]], [{ type: 'identity', handle: worker.handle }]]) {
        const res = await t
          .http()
          .post('/api/v1/contact-rules')
          .set(bearer(acme))
          .send({ identity: requester.handle, direction: 'inbound', action: 'allow', peer });
        expectFieldError(res, 'peer');
      }
    });
  });

  describe('__proto__, constructor and prototype are unknown fields', () => {
    // Sent as raw JSON: JSON.parse makes them own keys, as an attacker's body would.
    const send = (method: 'post' | 'patch', path: string, headers: Record<string, string>, json: string) =>
      t.http()[method](path).set(headers).set('Content-Type', 'application/json').send(json);

    it('a PATCH body with __proto__ or constructor at the top level', async () => {
      const identity = await createIdentity(t, bearer(acme));
      for (const json of [
        '{"__proto__":{"enabled":true}}',
        '{"constructor":{"prototype":{"admin":true}}}',
        '{"display_name":"x","prototype":{}}',
      ]) {
        const res = await send('patch', `/api/v1/identities/${identity.agent_handle}`, bearer(acme), json);
        expectFieldError(
          res,
          Object.keys(JSON.parse(json)).find((key) => key !== 'display_name')!,
        );
      }
      const settings = await send(
        'patch',
        `/api/v1/identities/${identity.agent_handle}/settings`,
        bearer(acme),
        '{"enabled":true,"__proto__":{"x":1}}',
      );
      expectFieldError(settings, '__proto__');
      // Nothing was applied.
      const read = await t.http().get(`/api/v1/identities/${identity.agent_handle}`).set(bearer(acme)).expect(200);
      expect(read.body.enabled).toBe(false);
    });

    it('nested, on several routes', async () => {
      const key = await t.http().post('/api/v1/api-keys').set(bearer(acme)).send({ scope: 'admin' }).expect(201);
      expectFieldError(
        await send(
          'patch',
          `/api/v1/api-keys/${key.body.id}`,
          bearer(acme),
          '{"label":"x","constructor":{"name":"y"}}',
        ),
        'constructor',
      );
      expectFieldError(
        await send(
          'post',
          '/api/v1/contact-rules',
          bearer(acme),
          `{"identity":"${requester.handle}","direction":"inbound","action":"allow","peer":{"type":"identity","handle":"${worker.handle}","__proto__":{"type":"organization"}}}`,
        ),
        'peer.__proto__',
      );
      const task = await submitTask(t, requester, worker);
      expectFieldError(
        await send(
          'post',
          `/api/v1/tasks/${task.id}/reply`,
          apiKey(worker.key),
          '{"message":{"parts":[{"kind":"data","data":{"constructor":{"prototype":{"polluted":true}}}}]}}',
        ),
        'message.parts[0].data.constructor',
      );
      expectFieldError(await send('post', '/api/v1/console/signup', {}, '{"__proto__":{"admin":true}}'), '__proto__');
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

    it('on the protocol endpoint too: -32600 naming the key (HTTP 400)', async () => {
      const json =
        `{"jsonrpc":"2.0","id":7,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m-${unique('p')}",` +
        `"parts":[{"kind":"text","text":"x"}],"metadata":{"__proto__":{"admin":true}}},"configuration":{"blocking":false}}}`;
      const res = await send('post', `/a2a/${worker.handle}`, apiKey(requester.key), json).expect(400);
      expect(res.body).toMatchObject({
        jsonrpc: '2.0',
        id: 7,
        error: { code: -32600, message: 'params.message.metadata.__proto__ is not a known field' },
      });
    });
  });

  describe('compressed bodies (Content-Encoding)', () => {
    const signupBody = () =>
      JSON.stringify({ organization_name: 'Zipped', email: `${unique('zip')}@example.test`, password: PASSWORD });
    const ENCODERS: Record<string, (body: string) => Buffer> = {
      gzip: (body) => gzipSync(body),
      deflate: (body) => deflateSync(body),
      br: (body) => brotliCompressSync(body),
    };
    const sendEncoded = (path: string, encoding: string, body: Buffer, headers: Record<string, string> = {}) =>
      t
        .http()
        .post(path)
        .set(headers)
        .set('Content-Type', 'application/json')
        .set('Content-Encoding', encoding)
        // As is: superagent would serialize a Buffer as JSON ({"type":"Buffer",…}) for a JSON content type.
        .serialize((raw: unknown) => raw as string)
        .send(body);

    it.each(Object.keys(ENCODERS))('a valid %s body is read as JSON', async (encoding) => {
      await sendEncoded('/api/v1/console/signup', encoding, ENCODERS[encoding](signupBody())).expect(201);
    });

    it.each(Object.keys(ENCODERS))(
      'a corrupt or truncated %s body is a 400 invalid_content_encoding, not logged as an error',
      async (encoding) => {
        const valid = ENCODERS[encoding](signupBody());
        const before = logged.filter((entry) => Number(entry.level) >= 50).length;
        for (const body of [
          Buffer.from('this is not compressed at all'),
          valid.subarray(0, Math.floor(valid.length / 2)),
          Buffer.concat([valid.subarray(0, 4), Buffer.alloc(32, 0xff)]),
        ]) {
          const res = await sendEncoded('/api/v1/console/signup', encoding, body);
          expect({ status: res.status, code: res.body.code }).toEqual({
            status: 400,
            code: 'invalid_content_encoding',
          });
          expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
        }
        // On an authenticated route and on the protocol endpoint alike.
        const rest = await sendEncoded('/api/v1/contact-rules', encoding, Buffer.from('garbage'), bearer(acme));
        expect({ status: rest.status, code: rest.body.code }).toEqual({
          status: 400,
          code: 'invalid_content_encoding',
        });
        const protocol = await sendEncoded(
          `/a2a/${worker.handle}`,
          encoding,
          Buffer.from('garbage'),
          apiKey(requester.key),
        );
        expect(protocol.status).toBe(400);
        expect(protocol.body).toMatchObject({
          jsonrpc: '2.0',
          id: null,
          error: { code: -32600, data: { reason: 'invalid_content_encoding' } },
        });
        expect(logged.filter((entry) => Number(entry.level) >= 50).length).toBe(before);
      },
    );

    it.each(['compress', 'zstd', 'x-unknown', 'gzip, gzip'])(
      'an encoding the service does not accept (%s) is a 415',
      async (encoding) => {
        const res = await sendEncoded('/api/v1/console/signup', encoding, gzipSync(signupBody()));
        expect({ status: res.status, code: res.body.code }).toEqual({ status: 415, code: 'unsupported_media_type' });
      },
    );
  });

  describe('a lone UTF-16 surrogate in a string is a 400 naming the field', () => {
    it.each(['a\ud800@b.test', 'a\udfff@b.test', '\ud800'])('signup with email %j', async (email) => {
      const res = await t
        .http()
        .post('/api/v1/console/signup')
        .send({ organization_name: 'X', email, password: PASSWORD });
      expectFieldError(res, 'email');
    });

    it('signup with a lone surrogate in the organization name or the password', async () => {
      const email = `${unique('s')}@example.test`;
      expectFieldError(
        await t.http().post('/api/v1/console/signup').send({ organization_name: 'X\udc00', email, password: PASSWORD }),
        'organization_name',
      );
      expectFieldError(
        await t
          .http()
          .post('/api/v1/console/signup')
          .send({ organization_name: 'X', email, password: `${PASSWORD}\ud83d` }),
        'password',
      );
    });

    it('an invitation to such an email', async () => {
      const res = await t.http().post('/api/v1/console/invites').set(bearer(acme)).send({ email: 'a\ud800@b.test' });
      expectFieldError(res, 'email');
    });

    it('login with such an email', async () => {
      const res = await t.http().post('/api/v1/console/login').send({ email: 'a\ud800@b.test', password: PASSWORD });
      expectFieldError(res, 'email');
    });

    it('nested, in a key or a value, on the protocol endpoint too', async () => {
      const message = v03Message('fine', { metadata: { 'key\ud800': 'x' } });
      const res = await t
        .http()
        .post(`/a2a/${worker.handle}`)
        .set(apiKey(requester.key))
        .send({ jsonrpc: '2.0', id: 9, method: 'message/send', params: { message } })
        .expect(400);
      expect(res.body).toMatchObject({
        jsonrpc: '2.0',
        id: 9,
        error: { code: -32600, message: expect.stringContaining('params.message.metadata') },
      });
      const task = await submitTask(t, requester, worker);
      expectFieldError(
        await reply(t, task.id, worker.key, { message: { parts: [{ kind: 'text', text: 'half an emoji \ud83d' }] } }),
        'message.parts[0].text',
      );
    });

    it('a well-formed pair (an emoji) is accepted', async () => {
      await t
        .http()
        .post('/api/v1/console/signup')
        .send({ organization_name: 'Emoji 😀', email: `${unique('e')}@example.test`, password: `${PASSWORD} 😀` })
        .expect(201);
    });
  });

  describe('a body nested deeper than 64 levels (docs/api.md §10)', () => {
    it('is a 400 body_too_deep on the REST API, as problem+json; 64 levels go on to the route', async () => {
      // The body is level 1, `note`'s object level 2: deepJson(n) reaches level n + 1.
      const send = (levels: number) =>
        t
          .http()
          .post('/api/v1/contact-rules')
          .set(apiKey(admin))
          .send({ note: deepJson(levels - 1) });
      const refused = await send(65).expect(400);
      expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(refused.body).toMatchObject({ status: 400, code: 'body_too_deep' });
      expect(refused.body.detail).toContain('64 levels');
      expect(refused.headers['x-request-id']).toBe(refused.body.request_id);
      const passed = await send(64).expect(400);
      expect(passed.body.code).toBe('validation_failed');
    });

    it('and on the HTTP+JSON binding, in its own error form; 64 levels are sent', async () => {
      // The body is level 1, the message 2, its metadata 3: deepJson(n) reaches level n + 2.
      const send = (levels: number) =>
        t
          .http()
          .post(`/a2a/${worker.handle}/rest/message:send`)
          .set({ ...apiKey(requester.key), 'A2A-Version': '1.0' })
          .send({
            message: { ...v1Message('deep'), metadata: deepJson(levels - 2) },
            configuration: { returnImmediately: true },
          });
      const refused = await send(65).expect(400);
      expect(refused.body).toMatchObject({
        code: 'body_too_deep',
        error: {
          code: 400,
          status: 'INVALID_ARGUMENT',
          details: [expect.objectContaining({ reason: 'BODY_TOO_DEEP' })],
        },
      });
      expect((await send(64).expect(200)).body.task.status.state).toBe('TASK_STATE_SUBMITTED');
    });
  });
});
