import { startApp, type TestApp } from '../support/app';
import { enabledAgent } from '../support/a2a';
import { eventually } from '../support/eventually';
import { bearer, PASSWORD, signup } from '../support/fixtures';

type Schema = {
  $ref?: string;
  type?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  required?: string[];
  allOf?: Schema[];
  nullable?: boolean;
  enum?: unknown[];
};
interface Response {
  description?: string;
  content?: Record<string, { schema?: Schema }>;
}
interface Operation {
  operationId?: string;
  summary?: string;
  security?: unknown[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  responses: Record<string, Response>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

/**
 * The served OpenAPI document is what the generated TypeScript client is built from:
 * it must describe every response of every operation.
 */
describe('the OpenAPI document', () => {
  let t: TestApp;
  let doc: Document;
  let operations: Array<[string, Operation]>;

  beforeAll(async () => {
    t = await startApp({ EVENTS_DISPATCHER: 'off' });
    doc = (await t.http().get('/api/openapi.json').expect(200)).body;
    operations = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, op]) => [`${method.toUpperCase()} ${path}`, op] as [string, Operation]),
    );
  });
  afterAll(() => t.close());

  const resolve = (schema: Schema): Schema => {
    if (!schema.$ref) {
      return schema;
    }
    const name = schema.$ref.replace('#/components/schemas/', '');
    expect(doc.components.schemas).toHaveProperty([name]);
    return doc.components.schemas[name];
  };

  it('describes many operations', () => {
    expect(operations.length).toBeGreaterThan(50);
  });

  it('gives every operation a success response with a schema (204 has no body; a redirect names its Location)', () => {
    const missing: string[] = [];
    for (const [name, op] of operations) {
      const successes = Object.entries(op.responses).filter(([status]) => /^2\d\d$/.test(status));
      // A browser navigation (single sign-on) succeeds with a redirect.
      const redirects = Object.entries(op.responses).filter(([status]) => /^30[23]$/.test(status));
      for (const [status, response] of redirects) {
        if (!(response as { headers?: Record<string, unknown> }).headers?.Location) {
          missing.push(`${name}: ${status} has no Location header`);
        }
      }
      if (successes.length === 0 && redirects.length === 0) {
        missing.push(`${name}: no 2xx response`);
      }
      for (const [status, response] of successes) {
        if (status === '204') {
          continue;
        }
        const contents = Object.values(response.content ?? {});
        if (contents.length === 0 || contents.some((c) => !c.schema || (!c.schema.$ref && !c.schema.type))) {
          missing.push(`${name}: ${status} has no schema`);
        }
      }
    }
    expect(missing).toEqual([]);
  });

  it("documents every operation's errors with the shared Problem schema (JSON-RPC errors on the protocol)", () => {
    const missing: string[] = [];
    for (const [name, op] of operations) {
      const statuses = Object.keys(op.responses);
      const errors = statuses.filter((status) => /^4\d\d$/.test(status));
      if (errors.length === 0) {
        missing.push(`${name}: no 4xx response`);
      }
      if (!statuses.includes('429')) {
        missing.push(`${name}: no 429`);
      }
      if (op.security?.length && !(statuses.includes('401') && statuses.includes('403'))) {
        missing.push(`${name}: no 401/403`);
      }
      if (op.requestBody && !['400', '413', '415'].every((s) => statuses.includes(s))) {
        missing.push(`${name}: body without 400/413/415`);
      }
      const errorRef =
        name === 'POST /a2a/{handle}' ? '#/components/schemas/JsonRpcResponse' : '#/components/schemas/Problem';
      for (const status of errors) {
        const contents = Object.values(op.responses[status].content ?? {});
        if (contents.length !== 1 || contents[0].schema?.$ref !== errorRef) {
          missing.push(`${name}: ${status} without ${errorRef}`);
        }
        if (!op.responses[status].description) {
          missing.push(`${name}: ${status} without a description`);
        }
      }
    }
    expect(missing).toEqual([]);
    expect(resolve({ $ref: '#/components/schemas/Problem' })).toMatchObject({
      properties: {
        code: { type: 'string' },
        detail: { type: 'string' },
        status: { type: 'number' },
        errors: { type: 'array' },
      },
    });
  });

  it('names every operation with a unique, readable operationId', () => {
    const ids = operations.map(([, op]) => op.operationId);
    for (const id of ids) {
      expect(id).toMatch(/^[a-z][A-Za-z0-9]*$/);
    }
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
    expect(doc.paths['/api/v1/api-keys'].post.operationId).toBe('mintApiKey');
    expect(doc.paths['/api/v1/console/members/{id}'].delete.operationId).toBe('removeMember');
  });

  it('has summaries that speak to users, not to internal documents', () => {
    for (const [name, op] of operations) {
      expect(`${name}: ${op.summary ?? ''}`).toMatch(/: \S/);
      // A summary stands on its own: no section sign, so no citation of a specification's section.
      expect(`${name}: ${op.summary}`).not.toMatch(/§/);
    }
  });

  it('resolves every $ref', () => {
    const refs = JSON.stringify(doc).match(/"\$ref":"[^"]+"/g) ?? [];
    for (const ref of new Set(refs)) {
      resolve({ $ref: JSON.parse(`{${ref}}`).$ref });
    }
  });

  it("documents the protocol endpoint's JSON-RPC request body, with the methods of both generations", () => {
    const op = doc.paths['/a2a/{handle}'].post;
    const body = resolve(op.requestBody!.content!['application/json'].schema!);
    expect(body.required).toEqual(expect.arrayContaining(['jsonrpc', 'id', 'method']));
    expect(body.properties!.method.enum).toEqual(
      expect.arrayContaining(['message/send', 'tasks/get', 'SendMessage', 'GetTask']),
    );
    expect(Object.keys(op.responses['200'].content!)).toEqual(['application/json', 'text/event-stream']);
  });

  it('lists in the {<plural>: [...], next_cursor} shape', () => {
    const list = resolve(
      doc.paths['/api/v1/console/members'].get.responses['200'].content!['application/json'].schema!,
    );
    expect(Object.keys(list.properties!).sort()).toEqual(['members', 'next_cursor']);
    expect(list.properties!.members).toMatchObject({ type: 'array', items: { $ref: '#/components/schemas/Member' } });
  });

  /** The body's fields are the schema's, and its required fields are present. */
  function expectConforms(body: Record<string, unknown>, schema: Schema) {
    const resolved = resolve(schema);
    expect(Object.keys(body).sort()).toEqual(expect.arrayContaining(resolved.required ?? []));
    for (const key of Object.keys(body)) {
      expect(Object.keys(resolved.properties ?? {})).toContain(key);
    }
  }

  it('describes what the service really answers (samples)', async () => {
    const owner = await signup(t);
    const schemaOf = (path: string, method: string, status: string) =>
      doc.paths[path][method].responses[status].content!['application/json'].schema!;
    const session = await t
      .http()
      .post('/api/v1/console/login')
      .send({ email: owner.email, password: PASSWORD })
      .expect(200);
    expectConforms(session.body, schemaOf('/api/v1/console/login', 'post', '200'));
    const invite = await t
      .http()
      .post('/api/v1/console/invites')
      .set(bearer(owner))
      .send({ email: 'sample@example.test' })
      .expect(201);
    expectConforms(invite.body, schemaOf('/api/v1/console/invites', 'post', '201'));
    const minted = await t.http().post('/api/v1/api-keys').set(bearer(owner)).send({ scope: 'admin' }).expect(201);
    expectConforms(minted.body, schemaOf('/api/v1/api-keys', 'post', '201'));
    const members = await t.http().get('/api/v1/console/members').set(bearer(owner)).expect(200);
    expectConforms(members.body.members[0], { $ref: '#/components/schemas/Member' });
    const problem = await t.http().delete(`/api/v1/console/members/${owner.userId}`).set(bearer(owner)).expect(409);
    expectConforms(problem.body, { $ref: '#/components/schemas/Problem' });
  });

  it('describes upstream agents, events and the card signing keys as served (samples)', async () => {
    const owner = await signup(t);
    const schemaOf = (path: string, method: string, status: string) =>
      doc.paths[path][method].responses[status].content!['application/json'].schema!;
    const agent = await enabledAgent(t, owner);
    const upstreamPath = '/api/v1/identities/{handle}/upstream';
    const set = await t
      .http()
      .put(`/api/v1/identities/${agent.handle}/upstream`)
      .set(bearer(owner))
      .send({
        url: 'https://upstream.example.com/a2a',
        protocol_version: '1.0',
        binding: 'JSONRPC',
        auth: { type: 'bearer', value: 'upstream-token' },
      })
      .expect(200);
    expectConforms(set.body, schemaOf(upstreamPath, 'put', '200'));
    expectConforms(set.body.auth, { $ref: '#/components/schemas/UpstreamAuth' });
    const read = await t.http().get(`/api/v1/identities/${agent.handle}/upstream`).set(bearer(owner)).expect(200);
    expectConforms(read.body, schemaOf(upstreamPath, 'get', '200'));
    const tested = await t
      .http()
      .post(`/api/v1/identities/${agent.handle}/upstream/test`)
      .set(bearer(owner))
      .send({ url: 'https://upstream.example.invalid/a2a', protocol_version: '1.0', binding: 'JSONRPC' })
      .expect(200);
    expectConforms(tested.body, schemaOf(`${upstreamPath}/test`, 'post', '200'));
    expectConforms(tested.body.forward_to, { $ref: '#/components/schemas/UpstreamForwardTarget' });
    const preview = await t
      .http()
      .get(`/api/v1/identities/${agent.handle}/card-preview`)
      .set(bearer(owner))
      .expect(200);
    expectConforms(preview.body, schemaOf('/api/v1/identities/{handle}/card-preview', 'get', '200'));
    expectConforms(preview.body.cards, { $ref: '#/components/schemas/CardPreviewCards' });
    expectConforms(preview.body.cards['1.0'], { $ref: '#/components/schemas/AgentCard' });
    // Events show once no older transaction is open on the server (the list's visibility horizon).
    const events = await eventually(
      () => t.http().get('/api/v1/events').set(bearer(owner)).expect(200),
      (res) => res.body.events.length > 0,
    );
    expectConforms(events.body, schemaOf('/api/v1/events', 'get', '200'));
    expect(events.body.events.length).toBeGreaterThan(0);
    for (const event of events.body.events) {
      expectConforms(event, { $ref: '#/components/schemas/Event' });
    }
    expect(Object.keys(doc.paths['/api/v1/events/stream'].get.responses['200'].content!)).toEqual([
      'text/event-stream',
    ]);
    const jwks = await t.http().get('/.well-known/jwks.json').expect(200);
    expectConforms(jwks.body, schemaOf('/.well-known/jwks.json', 'get', '200'));
    for (const key of jwks.body.keys) {
      expectConforms(key, { $ref: '#/components/schemas/Jwk' });
    }
  });
});
