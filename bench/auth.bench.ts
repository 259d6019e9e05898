import { KeysRepository } from '../src/keys/keys.repository';
import { inTurns, load, startBenchServer, table, type LoadResult } from './lib';
import { profiled } from './profile';

/**
 * Issue 13: authenticated throughput against an unauthenticated route on one server
 * at the same concurrency. Aim: `GET /api-keys/self` ≥ 0.8× `GET /healthz`, with an
 * API key and with a bearer access token for it (issue 39, docs/api.md §17: the
 * token's signature checked from memory, its key read as a key is). The three
 * routes alternate for BENCH_ROUNDS rounds (default 3) of BENCH_DURATION seconds
 * (default 10) each, so drift on a shared machine hits both alike; the ratio of the
 * means is the figure. BENCH_PROFILE=<dir> then profiles each route once more
 * (in-process, node:inspector) and prints where the time goes.
 */
export async function run(): Promise<void> {
  const server = await startBenchServer();
  try {
    const signup = await fetch(`${server.baseUrl}/api/v1/console/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        organization_name: 'Bench',
        email: 'bench@example.test',
        password: 'correct horse battery staple',
      }),
    }).then((r) => r.json() as Promise<{ token: string }>);
    const { key } = await fetch(`${server.baseUrl}/api/v1/api-keys`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${signup.token}` },
      body: JSON.stringify({ scope: 'admin' }),
    }).then((r) => r.json() as Promise<{ key: string }>);
    const { id: keyId } = await fetch(`${server.baseUrl}/api-keys/self`, { headers: { 'x-api-key': key } }).then(
      (r) => r.json() as Promise<{ id: string }>,
    );
    const { access_token: token } = await fetch(`${server.baseUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: keyId, client_secret: key }).toString(),
    }).then((r) => r.json() as Promise<{ access_token: string }>);

    // How many requests share a key lookup (KeyLookup batches the lookups of one turn), by hash and by id.
    const repository = server.app.get(KeysRepository);
    const findByHashes = repository.findByHashes.bind(repository);
    const findByIds = repository.findByIds.bind(repository);
    const lookups = { statements: 0 };
    repository.findByHashes = (hashes) => {
      lookups.statements += 1;
      return findByHashes(hashes);
    };
    repository.findByIds = (ids) => {
      lookups.statements += 1;
      return findByIds(ids);
    };

    const duration = Number(process.env.BENCH_DURATION ?? 10);
    const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
    const routes = {
      health: { name: 'GET /healthz', url: `${server.baseUrl}/healthz`, headers: {} },
      self: { name: 'GET /api-keys/self', url: `${server.baseUrl}/api-keys/self`, headers: { 'x-api-key': key } },
      token: {
        name: 'GET /api-keys/self (bearer token)',
        url: `${server.baseUrl}/api-keys/self`,
        headers: { authorization: `Bearer ${token}` },
      },
    };
    const drive = (route: keyof typeof routes, seconds: number) =>
      load(routes[route].name, { ...routes[route], connections: 50, duration: seconds });

    await drive('health', 2);
    await drive('self', 2);
    await drive('token', 2);
    const results: Record<keyof typeof routes, LoadResult[]> = { health: [], self: [], token: [] };
    lookups.statements = 0;
    // Which route goes first alternates, so neither always runs on the warmer machine.
    await inTurns(
      rounds,
      ['health', 'self', 'token'] as const,
      async (route) => void results[route].push(await drive(route, duration)),
      1,
    );

    table(
      [...results.health, ...results.self, ...results.token].map((r) => ({
        route: r.name,
        'req/s': Math.round(r.requestsPerSecond),
        'p50 ms': r.p50,
        'p99 ms': r.p99,
        errors: r.errors,
        non2xx: r.non2xx,
      })),
    );
    const mean = (list: LoadResult[]) => list.reduce((sum, r) => sum + r.requestsPerSecond, 0) / list.length;
    const perRound = (list: LoadResult[]) =>
      list.map((r, i) => (r.requestsPerSecond / results.health[i].requestsPerSecond).toFixed(2)).join(', ');
    console.log(
      `\nmean over ${rounds} rounds: /healthz ${Math.round(mean(results.health))} req/s, /api-keys/self ` +
        `${Math.round(mean(results.self))} req/s with a key, ${Math.round(mean(results.token))} req/s with a token; ` +
        `authenticated / unauthenticated: key ${(mean(results.self) / mean(results.health)).toFixed(2)}× ` +
        `(per round: ${perRound(results.self)}), token ${(mean(results.token) / mean(results.health)).toFixed(2)}× ` +
        `(per round: ${perRound(results.token)})`,
    );

    const authenticated = [...results.self, ...results.token].reduce(
      (sum, r) => sum + r.requestsPerSecond * duration,
      0,
    );
    console.log(
      `key lookups: ${lookups.statements} statements for about ${Math.round(authenticated)} authenticated requests ` +
        `(${(authenticated / Math.max(1, lookups.statements)).toFixed(1)} requests per statement)`,
    );

    const dir = process.env.BENCH_PROFILE;
    if (dir) {
      for (const route of ['health', 'self', 'token'] as const) {
        const { result, byFunction, byPackage } = await profiled(
          () => drive(route, duration),
          `${dir}/auth-${route}.cpuprofile`,
        );
        console.log(`\nprofile of ${result.name} (${Math.round(result.requestsPerSecond)} req/s while profiled)`);
        const rows = (list: typeof byPackage, n: number) =>
          list.slice(0, n).map((t) => ({ where: t.name, 'self ms': Math.round(t.ms), share: shareOf(t.share) }));
        table(rows(byPackage, 15));
        console.log('');
        table(rows(byFunction, 25));
      }
    }
  } finally {
    await server.close();
  }
}

function shareOf(share: number): string {
  return Number.isNaN(share) ? '' : `${(share * 100).toFixed(1)}%`;
}
