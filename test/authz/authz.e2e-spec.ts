import { readFileSync } from 'node:fs';
import { startApp, type TestApp } from '../support/app';
import { listRoutes } from '../support/routes';
import { Issuer, WORKLOAD_AUDIENCE, WORKLOAD_SUBJECT } from '../support/token-issuer';
import { PERMISSIONS_SNAPSHOT } from './permissions';
import { MATRIX, type MatrixRow } from './matrix';
import { CREDENTIALS, TOKEN_CREDENTIALS, World, type Credential, type Headers, type TokenCredential } from './world';

/** Where a trusted issuer's token (and the token exchanged for it) answers otherwise than its identity's agent key. */
const FEDERATED_EXCEPTIONS: Record<string, number> = { 'GET /api-keys/self': 403, 'POST /api-keys/self/revoke': 403 };

describe('authorization matrix', () => {
  let t: TestApp;
  let w: World;
  let issuer: Issuer;
  /** A trusted issuer's token whose subject acme trusts as its claimed identity (docs/api.md §17). */
  let federated: Headers;
  /** The service's token exchanged for that token (RFC 8693, docs/api.md §17): it answers as the token does. */
  let exchanged: Headers;

  beforeAll(async () => {
    // Authorization only: no event is sent anywhere (and a delivery is never in flight when a cell retries it).
    // Event streams answer 200 and stay open: the shortest maximum duration ends them.
    t = await startApp({
      EVENTS_DISPATCHER: 'off',
      SSE_MAX_DURATION_MS: '1000',
      RATE_LIMIT_PUBLIC_PER_MINUTE: '100000',
      // The trusted issuer's JWKS is on loopback, allowed as webhook tests allow loopback receivers.
      WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true',
    });
    w = await World.create(t);
    issuer = new Issuer();
    await issuer.start();
    issuer.add('k1');
    await t
      .http()
      .post('/api/v1/trusted-issuers')
      .set(w.headers('admin'))
      .send({ issuer: issuer.url, audience: WORKLOAD_AUDIENCE, subjects: { [WORKLOAD_SUBJECT]: w.claimed.handle } })
      .expect(201);
    const subjectToken = issuer.token({ exp: Math.floor(Date.now() / 1000) + 3600 });
    federated = { Authorization: `Bearer ${subjectToken}` };
    const res = await t
      .http()
      .post('/oauth/token')
      .type('form')
      .send(
        new URLSearchParams({
          grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
          subject_token: subjectToken,
          subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
        }).toString(),
      )
      .expect(200);
    exchanged = { Authorization: `Bearer ${res.body.access_token}` };
  });
  afterAll(async () => {
    await issuer.close();
    await t.close();
  });

  it('has exactly one row for every route the application serves', () => {
    const routes = listRoutes(t.app).map((r) => r.route);
    const rows = MATRIX.map((r) => r.route);
    expect(rows.filter((r, i) => rows.indexOf(r) !== i)).toEqual([]);
    expect([...rows].sort()).toEqual([...routes].sort());
  });

  it('every route declares its credential surface (snapshot: a change in who may reach what shows in review)', () => {
    const surfaces = Object.fromEntries(listRoutes(t.app).map((r) => [r.route, r.surface]));
    expect(Object.values(surfaces)).not.toContain(undefined);
    // The snapshot is permissions-snapshot.e2e-spec.ts's, read from the decorators: the running application agrees with it.
    const { http } = JSON.parse(readFileSync(PERMISSIONS_SNAPSHOT, 'utf8')) as {
      http: Record<string, { surface: string }>;
    };
    expect(surfaces).toEqual(Object.fromEntries(Object.entries(http).map(([route, p]) => [route, p.surface])));
  });

  /** One cell: the route asked with `headers`, answered with `expected`. */
  async function cell(route: string, row: MatrixRow, headers: Headers, expected: number) {
    const [method, pattern] = route.split(' ');
    const path = row.path ? await row.path(w) : pattern;
    let req = t.http()[method.toLowerCase() as 'get' | 'post' | 'patch' | 'delete'](path).set(headers);
    if (row.body) {
      req = req.send((await row.body(w)) as object);
    }
    const res = await req;
    // problem+json carries `code`; the protocol's JSON-RPC error bodies carry `error.data.reason`; a method error
    // of the HTTP+JSON binding is a google.rpc.Status (`error.status`, v1.0) or a v0.3 error object (numeric `code`);
    // the token endpoint's, RFC 6749's `error` (a string).
    const reason =
      res.body?.code ??
      res.body?.error?.data?.reason ??
      res.body?.error?.status ??
      (typeof res.body?.error === 'string' ? res.body.error : undefined);
    const code = reason === undefined ? undefined : String(reason);
    expect({ status: res.status, code }).toEqual({
      status: expected,
      code: res.status >= 400 ? expect.any(String) : undefined,
    });
  }

  describe.each(MATRIX.map((r) => [r.route, r] as const))('%s', (route, row) => {
    it.each(CREDENTIALS.map((c) => [c, row.statuses[c]] as const))(
      '%s → %i',
      async (credential: Credential, expected) => {
        const asMember = row.ownAccount && (credential === 'console' || credential === 'otherConsole');
        const headers = asMember
          ? (await w.freshMember(credential)).headers
          : row.consumesCredential
            ? await w.fresh(credential)
            : w.headers(credential);
        await cell(route, row, headers, expected);
      },
    );

    // A trusted issuer's token for acme's claimed identity answers as that identity's agent key — but on the
    // routes about the calling key itself: it is no key (403 not_an_api_key).
    const asFederated = FEDERATED_EXCEPTIONS[route] ?? row.statuses.agent;
    it(`federated → ${asFederated}`, async () => {
      await cell(route, row, federated, asFederated);
    });
    it(`exchanged → ${asFederated}`, async () => {
      await cell(route, row, exchanged, asFederated);
    });

    // An access token gets exactly its key's answer (docs/api.md §17), on every route.
    it.each(
      Object.entries(TOKEN_CREDENTIALS).map(([token, key]) => [token as TokenCredential, row.statuses[key]] as const),
    )('%s → %i', async (token, expected) => {
      await cell(route, row, row.consumesCredential ? await w.freshToken(token) : w.headers(token), expected);
    });
  });
});
