import { MetricsServer } from '../../src/metrics/metrics.server';
import { agentPair, enabledAgent, reply, rpc, submitTask, v03Message } from '../support/a2a';
import { startApp, type TestApp } from '../support/app';
import { eventually } from '../support/eventually';
import { apiKey, bearer, mintAdminKey, signup, type ConsoleAccount } from '../support/fixtures';
import { startReceiver, type Receiver } from '../support/receiver';

/** One sample of the scrape: `name{labels} value`. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | null {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) {
      continue;
    }
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) {
      continue;
    }
    const found = Object.fromEntries(
      [...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]),
    );
    if (Object.entries(labels).every(([key, value]) => found[key] === value)) {
      return Number(match[3]);
    }
  }
  return null;
}

describe('metrics (docs/operations.md, Metrics)', () => {
  let t: TestApp;
  let receiver: Receiver;
  let metricsUrl: string;
  const scrape = async () => {
    const res = await fetch(metricsUrl);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    return res.text();
  };

  beforeAll(async () => {
    t = await startApp({
      METRICS_PORT: '0',
      WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true',
      EVENTS_POLL_INTERVAL_MS: '50',
      // One attempt each within the test: a failed one is retried only much later.
      WEBHOOK_RETRY_SCHEDULE_MS: '600000',
      WEBHOOK_TIMEOUT_MS: '2000',
      RATE_LIMIT_WEBHOOK_TESTS_PER_MINUTE: '1',
    });
    receiver = await startReceiver(({ path }) => (path.startsWith('/hook/bad') ? 500 : 200));
    metricsUrl = `http://127.0.0.1:${t.app.get(MetricsServer).port}/metrics`;
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  it('serves GET /metrics on its own listener, bound to loopback, and not on the API port', async () => {
    expect(t.app.get(MetricsServer).port).toEqual(expect.any(Number));
    expect(t.app.get(MetricsServer).address).toBe('127.0.0.1'); // METRICS_HOST's default
    await t.http().get('/metrics').expect(404);
    expect((await fetch(metricsUrl.replace('/metrics', '/other'))).status).toBe(404);
    const text = await scrape();
    // prom-client's default metrics: event-loop lag among them.
    expect(sample(text, 'nodejs_eventloop_lag_seconds')).not.toBeNull();
    expect(sample(text, 'a2a_db_pool_connections', { state: 'total' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'a2a_db_pool_connections', { state: 'waiting' })).toBe(0);
  });

  it('counts a scripted workload exactly, with route templates and no ids or handles in labels', async () => {
    // REST: a template route answered 200 and 404, an unknown route.
    const acme: ConsoleAccount = await signup(t);
    const { requester, worker } = await agentPair(t, acme);
    await t.http().get(`/api/v1/identities/${worker.handle}`).set(bearer(acme)).expect(200);
    await t.http().get('/api/v1/identities/no-such-agent-here').set(bearer(acme)).expect(404);
    await t.http().get(`/api/v1/nothing/${requester.id}`).set(bearer(acme)).expect(404);

    // Protocol: one send admitted (same organization), settled by the worker; one refused by admission.
    const task = await submitTask(t, requester, worker);
    await reply(t, task.id, worker.key, { state: 'completed' }).expect(200);
    const stranger = await enabledAgent(t, await signup(t));
    await rpc(t, worker.handle, stranger.key, 'message/send', {
      message: v03Message('hello'),
      configuration: { blocking: false },
    }).expect(403);

    // Webhooks: a ping delivered, a ping that fails (retried later); a second ping over the limit (429).
    const good = await signup(t);
    const bad = await signup(t);
    const goodHook = await t
      .http()
      .post('/api/v1/webhooks')
      .set(bearer(good))
      .send({ url: `${receiver.url}/good`, events: ['ping'] })
      .expect(201);
    const badHook = await t
      .http()
      .post('/api/v1/webhooks')
      .set(bearer(bad))
      .send({ url: `${receiver.url}/bad`, events: ['ping'] })
      .expect(201);
    await t.http().post(`/api/v1/webhooks/${goodHook.body.id}/test`).set(bearer(good)).expect(202);
    await t.http().post(`/api/v1/webhooks/${badHook.body.id}/test`).set(bearer(bad)).expect(202);
    await t.http().post(`/api/v1/webhooks/${goodHook.body.id}/test`).set(bearer(good)).expect(429);

    const text = await eventually(
      scrape,
      (scraped) =>
        sample(scraped, 'a2a_deliveries_total', { kind: 'webhook', outcome: 'succeeded' }) !== null &&
        sample(scraped, 'a2a_deliveries_total', { kind: 'webhook', outcome: 'retrying' }) !== null,
    );
    expect(sample(text, 'a2a_deliveries_total', { kind: 'webhook', outcome: 'succeeded' })).toBe(1);
    expect(sample(text, 'a2a_deliveries_total', { kind: 'webhook', outcome: 'retrying' })).toBe(1);
    expect(receiver.received.map((r) => [r.path.split('/')[2], r.status])).toEqual(
      expect.arrayContaining([
        ['good', 200],
        ['bad', 500],
      ]),
    );
    expect(receiver.received).toHaveLength(2);
    expect(sample(text, 'a2a_deliveries_total', { kind: 'webhook', outcome: 'failed' })).toBeNull();
    expect(sample(text, 'a2a_outbox_lag_seconds')).toBeGreaterThanOrEqual(0);

    const identityRoute = '/api/v1/identities/:handle';
    expect(sample(text, 'a2a_http_requests_total', { method: 'GET', route: identityRoute, status: '200' })).toBe(1);
    expect(sample(text, 'a2a_http_requests_total', { method: 'GET', route: identityRoute, status: '404' })).toBe(1);
    // The unknown route, and the first test's GET /metrics on the API port.
    expect(sample(text, 'a2a_http_requests_total', { method: 'GET', route: 'unmatched', status: '404' })).toBe(2);
    expect(sample(text, 'a2a_http_requests_total', { method: 'POST', route: '/a2a/:handle', status: '200' })).toBe(1);
    expect(sample(text, 'a2a_http_requests_total', { method: 'POST', route: '/a2a/:handle', status: '403' })).toBe(1);
    expect(
      sample(text, 'a2a_http_requests_total', { method: 'POST', route: '/api/v1/webhooks/:id/test', status: '202' }),
    ).toBe(2);
    expect(
      sample(text, 'a2a_http_requests_total', { method: 'POST', route: '/api/v1/webhooks/:id/test', status: '429' }),
    ).toBe(1);
    expect(
      sample(text, 'a2a_http_request_duration_seconds_count', {
        method: 'GET',
        route: identityRoute,
        status_class: '2xx',
      }),
    ).toBe(1);

    expect(
      sample(text, 'a2a_protocol_calls_total', {
        method: 'sendMessage',
        version: '0.3',
        binding: 'jsonrpc',
        outcome: 'ok',
      }),
    ).toBe(1);
    expect(sample(text, 'a2a_admission_decisions_total', { decision: 'allowed', reason: 'same_organization' })).toBe(1);
    expect(
      sample(text, 'a2a_admission_decisions_total', { decision: 'denied', reason: 'not_permitted_by_requester' }),
    ).toBe(1);
    expect(sample(text, 'a2a_tasks_created_total')).toBe(1);
    expect(sample(text, 'a2a_tasks_settled_total', { state: 'completed' })).toBe(1);
    expect(sample(text, 'a2a_rate_limit_refusals_total', { limit: 'webhook_tests' })).toBe(1);

    // Bounded labels: no identity handle, no id of any kind.
    for (const value of [
      requester.handle,
      worker.handle,
      stranger.handle,
      requester.id,
      task.id,
      goodHook.body.id,
      acme.organizationId,
    ]) {
      expect(text).not.toContain(value);
    }
    const labelValues = [...text.matchAll(/\w+="((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]);
    expect(labelValues.filter((value) => /[0-9a-f]{8}-[0-9a-f]{4}-/.test(value))).toEqual([]);
  });

  it('counts the approval requests pending, from the database, at each scrape', async () => {
    const pending = async () => sample(await scrape(), 'a2a_approvals_pending');
    const before = (await pending()) ?? 0;
    const asker = await signup(t, 'Metrics Asker');
    const decider = await signup(t, 'Metrics Decider');
    const requester = await enabledAgent(t, asker, { filterMode: 'blacklist' });
    const worker = await enabledAgent(t, decider, { filterMode: 'approval' });
    const send = () =>
      rpc(t, worker.handle, requester.key, 'message/send', {
        message: v03Message('may I?'),
        configuration: { blocking: false },
      }).expect(200);
    const held = await send();
    expect(held.body.result.status.state).toBe('auth-required');
    await send(); // the pair's second task joins the same request
    expect(await pending()).toBe(before + 1);

    const admin = await mintAdminKey(t, decider);
    const [approval] = (await t.http().get('/api/v1/approvals?state=pending').set(apiKey(admin)).expect(200)).body
      .approvals as Array<{ id: string }>;
    await t
      .http()
      .post(`/api/v1/approvals/${approval.id}/approve`)
      .set(apiKey(admin))
      .send({ remember: 'once' })
      .expect(200);
    expect(await pending()).toBe(before);
  });

  it("labels every binding's request by its full route template, including the HTTP+JSON binding's", async () => {
    const acme = await signup(t);
    const { requester, worker } = await agentPair(t, acme);
    const task = await submitTask(t, requester, worker);
    const rest = (path: string) => `/a2a/${worker.handle}/rest${path}`;
    const v1 = { 'A2A-Version': '1.0' };
    await t
      .http()
      .get(rest(`/tasks/${task.id}`))
      .set(apiKey(requester.key))
      .set(v1)
      .expect(200);
    await t
      .http()
      .get(rest(`/v1/tasks/${task.id}`))
      .set(apiKey(requester.key))
      .expect(200);
    await t.http().get(rest('/tasks/no-such-task')).set(apiKey(requester.key)).set(v1).expect(404);
    await t.http().get(rest('/extendedAgentCard')).set(apiKey(requester.key)).set(v1).expect(200);
    await t
      .http()
      .post(rest(`/tasks/${task.id}:cancel`))
      .set(apiKey(requester.key))
      .set(v1)
      .send({})
      .expect(200);
    await t
      .http()
      .get(rest(`/tasks/${task.id}`))
      .set(v1)
      .expect(401);
    await t.http().get(`/a2a/${worker.handle}/card`).expect(200);
    await t.http().get(`/a2a/${worker.handle}/.well-known/agent-card.json`).expect(200);

    const text = await scrape();
    const count = (method: string, route: string, status: string) =>
      sample(text, 'a2a_http_requests_total', { method, route, status });
    expect(count('GET', '/a2a/:handle/rest/tasks/:taskId', '200')).toBe(1);
    expect(count('GET', '/a2a/:handle/rest/tasks/:taskId', '404')).toBe(1);
    expect(count('GET', '/a2a/:handle/rest/tasks/:taskId', '401')).toBe(1);
    expect(count('GET', '/a2a/:handle/rest/v1/tasks/:taskId', '200')).toBe(1);
    expect(count('GET', '/a2a/:handle/rest/extendedAgentCard', '200')).toBe(1);
    expect(count('POST', '/a2a/:handle/rest/tasks/:taskId:cancel', '200')).toBe(1);
    expect(count('GET', '/a2a/:handle/card', '200')).toBe(1);
    expect(count('GET', '/a2a/:handle/.well-known/agent-card.json', '200')).toBe(1);
    // The protocol call itself: the request handler's method, the binding and its generation.
    for (const version of ['1.0', '0.3']) {
      expect(
        sample(text, 'a2a_protocol_calls_total', { method: 'getTask', version, binding: 'rest', outcome: 'ok' }),
      ).toBe(1);
    }
    // Every route label is a whole template of the service (or one of the two fixed labels).
    const routes = new Set([...text.matchAll(/^a2a_http_requests_total\{.*route="([^"]*)"/gm)].map((m) => m[1]));
    for (const route of routes) {
      expect(route).toMatch(/^(\/a2a\/|\/api\/v1\/|unmatched$)/);
    }
  });
});
