import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import type { MetadataStorage as TransformerMetadata } from 'class-transformer/types/MetadataStorage';
import { getMetadataStorage } from 'class-validator';
import { startApp, type TestApp } from '../support/app';
import { submitTask } from '../support/a2a';
import { apiKey, bearer, insertIdentity, mintAdminKey, mintAgentKey, signup } from '../support/fixtures';
import { prng } from '../support/prng';
import { listRoutes } from '../support/routes';

/** The errors of an OAuth 2.0 token endpoint (RFC 6749 §5.2). */
const OAUTH_ERRORS = [
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'unauthorized_client',
  'unsupported_grant_type',
  'invalid_scope',
];

/**
 * Throws malformed and hostile input at every route the application serves and
 * checks that every answer is a documented 4xx (or a success), never a 5xx, and
 * that the server stays up. Routes come from the application itself, so a new
 * route is fuzzed without anyone remembering to add it.
 */

const SEED = Number(process.env.FUZZ_SEED ?? 20261121);
const random = prng(SEED);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];

function randomJson(depth = 0): unknown {
  const kind = Math.floor(random() * (depth > 3 ? 5 : 7));
  switch (kind) {
    case 0:
      return null;
    case 1:
      return random() < 0.5;
    case 2:
      return pick([0, -1, 1e308, -1e-308, 2 ** 53 + 1, 3.14]);
    case 3:
      return pick([
        '',
        ' ',
        'a'.repeat(5000),
        '\u0000',
        '😀'.repeat(50),
        '<script>',
        "' OR 1=1 --",
        '../../etc/passwd',
        '%00',
        '\u202e',
        '\ud800',
        'a\udfff@b.test',
      ]);
    case 4:
      return pick([
        'admin',
        'agent',
        'inbound',
        'both',
        'block',
        'allow',
        'completed',
        '00000000-0000-4000-8000-000000000000',
      ]);
    case 5:
      return Array.from({ length: Math.floor(random() * 4) }, () => randomJson(depth + 1));
    default: {
      const keys = [
        'scope',
        'label',
        'email',
        'password',
        'agent_handle',
        'skills',
        'state',
        'message',
        'parts',
        'peer',
        'direction',
        'action',
        'identity',
        'enabled',
        'filter_mode',
        'jsonrpc',
        'method',
        'params',
        'id',
        '__proto__',
        'constructor',
      ];
      return Object.fromEntries(
        Array.from({ length: 1 + Math.floor(random() * 4) }, () => [pick(keys), randomJson(depth + 1)]),
      );
    }
  }
}

const HOSTILE_PARAMS = [
  'x',
  'A'.repeat(300),
  '%00',
  '..%2F..',
  '%E0%A4%A',
  "1'%20OR%20'1'='1",
  '00000000-0000-4000-8000-000000000000',
  '-1',
  '😀',
];

const HOSTILE_BODIES: Array<[string, string | Buffer]> = [
  ['empty object', '{}'],
  ['array', '[]'],
  ['string', '"x"'],
  ['number', '42'],
  ['null', 'null'],
  ['truncated', '{"a":'],
  ['deep nesting', '{"a":' + '['.repeat(3000) + ']'.repeat(3000) + '}'],
  ['deep objects', '{"a":'.repeat(1000) + '1' + '}'.repeat(1000)],
  ['invalid UTF-8', Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0xff, 0x22, 0x7d])],
  ['prototype pollution', '{"__proto__":{"admin":true},"constructor":{"prototype":{"admin":true}}}'],
  ['huge string', JSON.stringify({ label: 'x'.repeat(200_000), description: 'y'.repeat(40_000) })],
  ['bad JSON-RPC: no method', '{"jsonrpc":"2.0","id":1}'],
  ['bad JSON-RPC: wrong version', '{"jsonrpc":"1.0","id":1,"method":"message/send","params":{}}'],
  ['bad JSON-RPC: params string', '{"jsonrpc":"2.0","id":1,"method":"message/send","params":"x"}'],
  ['JSON-RPC batch', '[{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"x"}}]'],
];

/**
 * Compressed bodies, as `[Content-Encoding, body]`: valid (read as JSON), corrupt,
 * truncated, and encodings the service does not accept. None may be a 5xx.
 */
const ENCODED_BODIES: Array<[string, Buffer]> = (() => {
  const json = JSON.stringify({ label: 'zipped', email: 'z@example.test', jsonrpc: '2.0', id: 1, method: 'x' });
  const encoders: Array<[string, (body: string) => Buffer]> = [
    ['gzip', (body) => gzipSync(body)],
    ['deflate', (body) => deflateSync(body)],
    ['br', (body) => brotliCompressSync(body)],
  ];
  return [
    ...encoders.flatMap(([encoding, encode]): Array<[string, Buffer]> => {
      const valid = encode(json);
      return [
        [encoding, valid],
        [encoding, encode('{"a":')],
        [encoding, Buffer.from('not compressed')],
        [encoding, valid.subarray(0, Math.floor(valid.length / 2))],
        [encoding, Buffer.concat([valid.subarray(0, 3), Buffer.alloc(64, 0xff)])],
        [encoding.toUpperCase(), valid],
      ];
    }),
    ['compress', gzipSync(json)],
    ['zstd', Buffer.from(json)],
    ['x-unknown', Buffer.from(json)],
    ['gzip, br', gzipSync(json)],
    ['identity', Buffer.from(json)],
  ];
})();

/** Lone UTF-16 surrogates (JSON's `"\ud800"` without its pair): not text, refused as the field's error. */
const LONE_SURROGATES = ['\ud800', 'a\udfff', 'x\ud83d@example.test'];

/** Fields the routes accept; each is also sent alone as `null` (NOT NULL columns must never see it). */
const KNOWN_FIELDS = [
  'scope',
  'scoped_identity_id',
  'label',
  'description',
  'email',
  'password',
  'organization_name',
  'agent_handle',
  'display_name',
  'skills',
  'publicly_discoverable',
  'allow_public_egress',
  'filter_mode',
  'enabled',
  'mint_key',
  'claim_code',
  'identity',
  'direction',
  'action',
  'peer',
  'note',
  'requester',
  'worker',
  'state',
  'message',
  'artifacts',
  'url',
  'events',
];

const craftedCursor = (value: unknown) => `cursor=${Buffer.from(JSON.stringify(value)).toString('base64url')}`;

const HOSTILE_QUERIES = [
  craftedCursor(['1', '00000000-0000-4000-8000-000000000000']),
  craftedCursor(['2026-01-01T00:00:00Z', '-'.repeat(36)]),
  craftedCursor(['-010000-01-01T00:00:00Z', '00000000-0000-4000-8000-000000000000']),
  'identity=' + 'a'.repeat(36),
  'peer=' + 'a'.repeat(36),
  'skill=%00',
  'tag=a%00',
  'context_id=' + 'f'.repeat(36),
  'updated_after=%2B010000-01-01T00:00:00Z',
  'limit=-1',
  'limit=abc',
  'limit=1e9',
  'limit[]=1&limit[]=2',
  'cursor=%%%',
  'cursor=' + 'Z'.repeat(600),
  'state=unknown',
  'role=owner',
  'q=' + encodeURIComponent("'; DROP TABLE identities; --"),
  'updated_after=yesterday',
];

/**
 * Bodies that put an array, an array of arrays or a null where a nested DTO expects an
 * object (or a list of objects), for every nested field of every DTO the application
 * has loaded, read from class-validator's metadata: a new DTO is covered without anyone
 * listing it. A nested DTO's own nested fields are reached through their parent (the
 * type comes from class-transformer's `@Type`). `field` is the top-level member that a
 * validation error must name.
 */
function nestedFieldBodies(): Array<{ field: string; body: Record<string, unknown> }> {
  type Rule = { type: string; propertyName: string; each: boolean };
  const byClass = (getMetadataStorage() as unknown as { validationMetadatas: Map<Function, Rule[]> })
    .validationMetadatas;
  // Not exported with types.
  const { defaultMetadataStorage } = require('class-transformer/cjs/storage') as {
    defaultMetadataStorage: TransformerMetadata;
  };
  const nested = (target: Function) => (byClass.get(target) ?? []).filter((m) => m.type === 'nestedValidation');
  const hostile = (each: boolean): unknown[] => (each ? [[[]], [[[]]], [null], ['x']] : [[], [[]], [{}]]);
  const values = (target: Function, depth: number): Array<[string, unknown]> =>
    nested(target).flatMap((m) => {
      const inner = defaultMetadataStorage.findTypeMetadata(target, m.propertyName)?.typeFunction() as
        Function | undefined;
      const deeper =
        inner && depth < 3
          ? values(inner, depth + 1).map(([field, value]) => (m.each ? [{ [field]: value }] : { [field]: value }))
          : [];
      return [...hostile(m.each), ...deeper].map((value): [string, unknown] => [m.propertyName, value]);
    });
  const seen = new Set<string>();
  return [...byClass.keys()]
    .flatMap((target) => values(target, 0))
    .map(([field, value]) => ({ field, body: { [field]: value } }))
    .filter(({ body }) => !seen.has(JSON.stringify(body)) && seen.add(JSON.stringify(body)));
}

interface Failure {
  request: string;
  status: number;
  body: string;
}

describe('fuzzing every route', () => {
  let t: TestApp;
  let credentials: Array<[string, Record<string, string>]>;
  /** Real resources, so bodies are validated against routes that get past their path. */
  let realParams: Record<string, string>;
  const failures: Failure[] = [];
  let requests = 0;

  beforeAll(async () => {
    t = await startApp({
      RATE_LIMIT_REST_PER_MINUTE: '1000000',
      RATE_LIMIT_PUBLIC_PER_MINUTE: '1000000',
      RATE_LIMIT_PROTOCOL_PER_MINUTE: '1000000',
      RATE_LIMIT_SIGNUPS_PER_HOUR: '1000000',
      LOGIN_FAILURE_LIMIT: '10000',
      // The event stream answers 200 and stays open: the shortest maximum duration ends each one.
      SSE_MAX_DURATION_MS: '1000',
    });
    const account = await signup(t);
    const identity = await insertIdentity(t, { organizationId: account.organizationId, enabled: true });
    const peer = await insertIdentity(t, { organizationId: account.organizationId });
    const spareKey = await t.http().post('/api/v1/api-keys').set(bearer(account)).send({ scope: 'admin' }).expect(201);
    const rule = await t
      .http()
      .post('/api/v1/contact-rules')
      .set(bearer(account))
      .send({
        identity: identity.handle,
        direction: 'inbound',
        action: 'allow',
        peer: { type: 'identity', handle: peer.handle },
      })
      .expect(201);
    const identityKey = await mintAgentKey(t, account, identity.id);
    const caller = await insertIdentity(t, { organizationId: account.organizationId, enabled: true });
    // A task the agent credential works on, so the reply's body is validated rather than refused by path.
    const task = await submitTask(
      t,
      { ...caller, key: await mintAgentKey(t, account, caller.id) },
      { ...identity, key: identityKey },
    );
    realParams = {
      'tasks/:id': `tasks/${task.id}`,
      'api-keys/:id': `api-keys/${spareKey.body.id}`,
      'contact-rules/:id': `contact-rules/${rule.body.id}`,
      ':handle': identity.handle,
    };
    credentials = [
      ['none', {}],
      ['invalid key', apiKey('a2a_agt_' + '\u00ff'.repeat(38))],
      ['admin', apiKey(await mintAdminKey(t, account))],
      ['agent', apiKey(identityKey)],
      ['console', bearer(account)],
    ];
  });
  afterAll(() => t.close());

  /** `nestedField`: the member a validation failure must name (a nested DTO field sent the wrong shape). */
  async function send(
    method: string,
    path: string,
    headers: Record<string, string>,
    body?: string | Buffer,
    nestedField?: string,
    encoding?: string,
  ): Promise<void> {
    requests += 1;
    const shown = Buffer.isBuffer(body) ? `<${body.length} bytes>` : JSON.stringify(body)?.slice(0, 80);
    const label = `${method} ${path} [${Object.keys(headers).join(',') || 'no credential'}]${encoding ? ` Content-Encoding: ${encoding}` : ''}${body !== undefined ? ` body=${shown}` : ''}`;
    let req = t.http()[method.toLowerCase() as 'get'](path).set(headers).timeout(15_000);
    if (encoding) {
      req = req.set('Content-Encoding', encoding);
    }
    // A Buffer goes as it is: superagent would serialize it as JSON ({"type":"Buffer",…}) for a JSON content type.
    if (body !== undefined) {
      req = req
        .set('Content-Type', 'application/json')
        .serialize((raw: unknown) => raw as string)
        .send(body);
    }
    let res;
    try {
      res = await req;
    } catch (error) {
      failures.push({ request: label, status: -1, body: String(error) });
      return;
    }
    const problem = res.headers['content-type']?.startsWith('application/problem+json');
    const jsonRpc = res.body && typeof res.body === 'object' && res.body.jsonrpc === '2.0' && res.body.error;
    // The HTTP+JSON binding's method errors, as A2A defines them: a google.rpc.Status (v1.0), a v0.3 error object.
    const rpcStatus =
      res.body?.error &&
      typeof res.body.error.code === 'number' &&
      typeof res.body.error.status === 'string' &&
      res.body.error.code === res.status;
    const legacyRest = typeof res.body?.code === 'number' && typeof res.body?.message === 'string';
    // The token endpoint answers as OAuth 2.0 says (RFC 6749 §5.2; docs/api.md §17), not as a problem.
    const oauth = path.split('?')[0] === '/oauth/token' && OAUTH_ERRORS.includes(res.body?.error);
    const documented =
      res.status < 400 ||
      (problem && typeof res.body.code === 'string' && res.body.status === res.status) ||
      (jsonRpc && typeof res.body.error.code === 'number') ||
      rpcStatus ||
      legacyRest ||
      oauth;
    // Another field's error is not enough: without one naming it, the wrong shape got through.
    const unnamed =
      nestedField !== undefined &&
      res.status === 400 &&
      res.body.code === 'validation_failed' &&
      !(res.body.errors ?? []).some(
        ({ field }: { field: string }) =>
          field === nestedField || field.startsWith(`${nestedField}.`) || field.startsWith(`${nestedField}[`),
      );
    if (res.status >= 500 || !documented || unnamed) {
      failures.push({ request: label, status: res.status, body: JSON.stringify(res.body).slice(0, 300) });
    }
  }

  it('answers every hostile request with a documented 4xx or a success, never a 5xx', async () => {
    const routes = listRoutes(t.app).map((r) => r.route.split(' ') as [string, string]);
    expect(routes.length).toBeGreaterThan(10);
    const nestedBodies = nestedFieldBodies();
    expect(new Set(nestedBodies.map((b) => b.field))).toEqual(
      new Set(['skills', 'message', 'artifacts', 'peer', 'auth', 'usage', 'cost', 'monthly_cost_budget']),
    );
    for (const [method, pattern] of routes) {
      for (const [, headers] of credentials) {
        const paths = pattern.includes(':') ? HOSTILE_PARAMS.map((p) => pattern.replace(/:[^/]+/g, p)) : [pattern];
        for (const path of paths) {
          await send(method, path, headers);
        }
        // Bodies and queries go to a real resource where the fuzzer knows one (DELETE
        // would remove it for the routes after), else to the first hostile path.
        const real = Object.entries(realParams).reduce((path, [param, value]) => path.replace(param, value), pattern);
        const base = method !== 'DELETE' && !real.includes(':') ? real : paths[0];
        for (const query of HOSTILE_QUERIES) {
          await send(method, `${base}?${query}`, headers);
        }
        if (method !== 'GET') {
          for (const [, body] of HOSTILE_BODIES) {
            await send(method, base, headers, body);
          }
          for (let i = 0; i < 8; i++) {
            await send(method, base, headers, JSON.stringify(randomJson()));
          }
          for (const { field, body } of nestedBodies) {
            await send(method, base, headers, JSON.stringify(body), field);
          }
          for (const field of KNOWN_FIELDS) {
            await send(method, base, headers, JSON.stringify({ [field]: null }));
            await send(method, base, headers, JSON.stringify({ [field]: 'x\u0000y' }));
          }
        }
      }
      // Compressed bodies and lone surrogates are judged before any credential is:
      // without one, and with a Console session (whose routes take the most fields).
      if (method === 'GET') {
        continue;
      }
      const real = Object.entries(realParams).reduce((path, [param, value]) => path.replace(param, value), pattern);
      const base = method !== 'DELETE' && !real.includes(':') ? real : pattern.replace(/:[^/]+/g, 'x');
      for (const headers of [credentials[0][1], credentials[4][1]]) {
        for (const [encoding, body] of ENCODED_BODIES) {
          await send(method, base, headers, body, undefined, encoding);
        }
        for (const field of KNOWN_FIELDS) {
          for (const text of LONE_SURROGATES) {
            await send(method, base, headers, JSON.stringify({ [field]: text }), field);
          }
          await send(method, base, headers, JSON.stringify({ [field]: { ['key\udc00']: 'x' } }), field);
          await send(method, base, headers, JSON.stringify({ [field]: [{ text: '\ud800' }] }), field);
        }
        await send(
          method,
          base,
          headers,
          JSON.stringify({ params: { message: { parts: [{ kind: 'text', text: 'half \ud83d' }] } } }),
          'params',
        );
      }
    }
    expect({ seed: SEED, requests, failures: failures.slice(0, 20), failureCount: failures.length }).toEqual({
      seed: SEED,
      requests,
      failures: [],
      failureCount: 0,
    });
  }, 300_000); // several thousand requests: on a loaded machine this outlasts the default 60 s

  it('every nested DTO field also refuses arrays and non-objects (declared with Nested, not a bare @ValidateNested)', () => {
    type Rule = { type: string; propertyName: string; each: boolean; constraintCls?: Function };
    const storage = getMetadataStorage();
    const byClass = (storage as unknown as { validationMetadatas: Map<Function, Rule[]> }).validationMetadatas;
    const unguarded = [...byClass.entries()].flatMap(([target, rules]) =>
      rules
        .filter((rule) => rule.type === 'nestedValidation')
        .filter(
          (nested) =>
            !rules.some(
              (rule) =>
                rule.propertyName === nested.propertyName &&
                rule.each === nested.each &&
                rule.constraintCls &&
                storage
                  .getTargetValidatorConstraints(rule.constraintCls)
                  .some((constraint) => constraint.name === 'isObject'),
            ),
        )
        .map((nested) => `${target.name}.${nested.propertyName}`),
    );
    expect(byClass.size).toBeGreaterThan(10);
    expect(unguarded).toEqual([]);
  });

  it('is still up afterwards', async () => {
    await t.http().get('/healthz').expect(200);
    await t.http().get('/readyz').expect(200);
  });
});
