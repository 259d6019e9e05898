import { readFileSync } from 'node:fs';
import { startApp, type TestApp } from '../support/app';
import { listRoutes } from '../support/routes';
import { PERMISSIONS_SNAPSHOT } from './permissions';
import { MATRIX, type MatrixRow } from './matrix';
import { CREDENTIALS, TOKEN_CREDENTIALS, World, type Credential, type Headers, type TokenCredential } from './world';

describe('authorization matrix', () => {
  let t: TestApp;
  let w: World;

  beforeAll(async () => {
    // Authorization only: no event is sent anywhere (and a delivery is never in flight when a cell retries it).
    // Event streams answer 200 and stay open: the shortest maximum duration ends them.
    t = await startApp({
      EVENTS_DISPATCHER: 'off',
      SSE_MAX_DURATION_MS: '1000',
      RATE_LIMIT_PUBLIC_PER_MINUTE: '100000',
    });
    w = await World.create(t);
  });
  afterAll(() => t.close());

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

    // An access token gets exactly its key's answer (docs/api.md §17), on every route.
    it.each(
      Object.entries(TOKEN_CREDENTIALS).map(([token, key]) => [token as TokenCredential, row.statuses[key]] as const),
    )('%s → %i', async (token, expected) => {
      await cell(route, row, row.consumesCredential ? await w.freshToken(token) : w.headers(token), expected);
    });
  });
});
