import { ListTasksRequest } from '@a2a-js/sdk';
import { createServer, type Server } from 'node:http';
import { createLogger } from '../../src/common/logger';
import { startApp, type TestApp } from '../support/app';
import { agentPair, rpc, type Agent } from '../support/a2a';
import { eventually } from '../support/eventually';
import { bearer, signup } from '../support/fixtures';
import { grpcClient, metadataOf, unary } from '../support/grpc';
import { logLines } from '../support/log-entries';

/**
 * Logs (docs/operations.md): every line written while serving a request carries its
 * `request_id`, its `trace_id` (from `traceparent`) and, once authenticated, its
 * principal; a failed delivery attempt is one `warn` line with the ids, never the URL's
 * secrets or the payload.
 */
describe('request-scoped logs', () => {
  let t: TestApp;
  let requester: Agent;
  let worker: Agent;
  const lines: string[] = [];
  const entries = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>);

  beforeAll(async () => {
    t = await startApp(
      {
        GRPC_PORT: '0',
        EVENTS_POLL_INTERVAL_MS: '50',
        WEBHOOK_RETRY_SCHEDULE_MS: '600000',
        WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true',
      },
      undefined,
      createLogger('debug', logLines(lines)),
    );
    ({ requester, worker } = await agentPair(t));
  });
  afterAll(() => t.close());

  it('every line of a protocol request carries its request id, trace id and principal', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const before = lines.length;
    const res = await rpc(t, worker.handle, requester.key, 'tasks/get', { id: 5 })
      .set('traceparent', `00-${traceId}-00f067aa0ba902b7-01`)
      .set('x-request-id', 'logs-test-0001');
    expect(res.status).toBe(200);
    expect(res.body.error.code).toBe(-32602);
    await eventually(
      async () => entries().some((e) => e.request_id === 'logs-test-0001' && e.msg === 'request'),
      (ok) => ok,
    );
    const during = entries()
      .slice(before)
      .filter((e) => e.request_id === 'logs-test-0001');
    // At least the handler's own line (params refused) and the request line.
    expect(during.map((e) => e.msg)).toEqual(expect.arrayContaining(['protocol params refused', 'request']));
    for (const entry of during) {
      expect(entry).toMatchObject({
        request_id: 'logs-test-0001',
        principal: { kind: 'agent', id: expect.any(String) },
      });
    }
    expect(during.every((e) => e.trace_id === traceId)).toBe(true);
    // No line written between the two carries another request's id or none at all.
    const debugLines = entries()
      .slice(before)
      .filter((e) => e.msg === 'protocol params refused');
    expect(debugLines.every((e) => e.request_id === 'logs-test-0001')).toBe(true);
  });

  it("a gRPC call's lines carry its request id, the traceparent's trace id and its principal", async () => {
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    const before = lines.length;
    const client = grpcClient(t);
    try {
      await unary(
        client,
        'listTasks',
        ListTasksRequest.fromJSON({ tenant: worker.handle }),
        metadataOf({ 'x-api-key': requester.key, traceparent: `00-${traceId}-b7ad6b7169203331-01` }),
      );
    } finally {
      client.close();
    }
    const call = await eventually(
      async () =>
        entries()
          .slice(before)
          .find((e) => e.msg === 'request' && e.method === 'gRPC'),
      (found) => found !== undefined,
    );
    expect(call).toMatchObject({
      request_id: expect.any(String),
      trace_id: traceId,
      principal: { kind: 'agent', id: expect.any(String) },
    });
    const during = entries()
      .slice(before)
      .filter((e) => e.request_id === call!.request_id);
    expect(
      during.every((e) => e.trace_id === traceId && (e.principal as { kind?: string } | undefined)?.kind === 'agent'),
    ).toBe(true);
  });

  it("a failed webhook delivery is one warn line with the ids, never the URL's secret or the payload", async () => {
    const refusing: Server = createServer((_req, res) => res.writeHead(503).end());
    await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
    try {
      const acme = await signup(t, 'Logs');
      const port = (refusing.address() as { port: number }).port;
      const url = `http://127.0.0.1:${port}/hook?token=URL-SECRET-123`;
      const webhook = await t
        .http()
        .post('/api/v1/webhooks')
        .set(bearer(acme))
        .send({ url, events: ['ping'] })
        .expect(201);
      const ping = await t.http().post(`/api/v1/webhooks/${webhook.body.id}/test`).set(bearer(acme)).expect(202);
      const warned = await eventually(
        async () => entries().filter((e) => e.level === 40 && e.webhook_id === webhook.body.id),
        (found) => found.length > 0,
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(entries().filter((e) => e.level === 40 && e.webhook_id === webhook.body.id)).toHaveLength(1);
      expect(warned[0]).toMatchObject({
        msg: 'webhook delivery failed',
        delivery_id: ping.body.id,
        attempt: 1,
        status_code: 503,
      });
      const all = lines.join('\n');
      expect(all).not.toContain('URL-SECRET-123');
      expect(all).not.toContain(webhook.body.secret);
    } finally {
      await new Promise((resolve) => refusing.close(resolve));
    }
  });
});
