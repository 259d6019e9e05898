import { load, startBenchServer, table } from './lib';

/**
 * Issue 2: authenticated throughput vs. an unauthenticated route on one server at
 * the same concurrency. Aim: authenticated ≥ 60% of /healthz, p99 < 10 ms at 50
 * connections.
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

    const duration = Number(process.env.BENCH_DURATION ?? 10);
    await load('warm-up', { url: `${server.baseUrl}/api-keys/self`, headers: { 'x-api-key': key }, duration: 2 });
    const health = await load('GET /healthz', { url: `${server.baseUrl}/healthz`, connections: 50, duration });
    const self = await load('GET /api-keys/self', {
      url: `${server.baseUrl}/api-keys/self`,
      headers: { 'x-api-key': key },
      connections: 50,
      duration,
    });

    table(
      [health, self].map((r) => ({
        route: r.name,
        'req/s': Math.round(r.requestsPerSecond),
        'p50 ms': r.p50,
        'p99 ms': r.p99,
        errors: r.errors,
        non2xx: r.non2xx,
      })),
    );
    console.log(
      `\nauthenticated / unauthenticated throughput: ${((self.requestsPerSecond / health.requestsPerSecond) * 100).toFixed(1)}%`,
    );
  } finally {
    await server.close();
  }
}
