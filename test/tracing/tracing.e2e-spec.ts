import { randomBytes } from 'node:crypto';
import { SendMessageRequest } from '@a2a-js/sdk';
import { createServer, type Server } from 'node:http';
import { createLogger } from '../../src/common/logger';
import { loadConfig } from '../../src/config/config';
import { startTracing, type Tracing } from '../../src/tracing/tracing';
import { startApp, type TestApp } from '../support/app';
import { agentPair, reply, rpc, v03Message, v1Message, type Agent } from '../support/a2a';
import { eventually } from '../support/eventually';
import { apiKey, bearer, signup } from '../support/fixtures';
import { grpcClient, metadataOf, unary } from '../support/grpc';
import { freePort } from '../support/server-process';
import { startUpstreamAgent } from '../support/upstream-agent';
import { startReceiver, subscribe, type Receiver } from '../support/receiver';
import { logLines } from '../support/log-entries';

/** An exported span, as the OTLP/HTTP JSON exporter sends it. */
interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  serviceName: string;
}

/** An in-process OTLP/HTTP receiver: `POST /v1/traces` with JSON bodies (ExportTraceServiceRequest). */
async function startCollector() {
  const requests: Array<{ path: string; contentType: string }> = [];
  const spans: ExportedSpan[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      requests.push({ path: req.url ?? '', contentType: String(req.headers['content-type']) });
      if (req.method === 'POST' && req.url === '/v1/traces') {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          resourceSpans: Array<{
            resource: { attributes: Array<{ key: string; value: { stringValue?: string } }> };
            scopeSpans: Array<{ spans: Array<Omit<ExportedSpan, 'serviceName'>> }>;
          }>;
        };
        for (const resource of body.resourceSpans) {
          const serviceName =
            resource.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue ?? '';
          for (const scope of resource.scopeSpans) {
            for (const span of scope.spans) {
              spans.push({ ...span, traceId: hex(span.traceId), serviceName });
            }
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    requests,
    spans,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Trace ids are hex in the JSON encoding; base64 (protobuf-JSON style) is accepted too. */
const hex = (id: string) => (/^[0-9a-f]{32}$/.test(id) ? id : Buffer.from(id, 'base64').toString('hex'));
const newTraceparent = () => {
  const traceId = randomBytes(16).toString('hex');
  return { traceId, traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` };
};
const traceIdOf = (traceparent: unknown) =>
  /^00-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/.exec(String(traceparent))?.[1] ?? null;

const APP_ENV = { WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true', EVENTS_POLL_INTERVAL_MS: '50' };

/**
 * Tracing (docs/operations.md): a caller's `traceparent` is continued by the service, carried
 * into the task's events, the webhooks of the change and the worker's reply, and the
 * spans go to OTEL_EXPORTER_OTLP_ENDPOINT — and nothing at all happens without it.
 */
describe('tracing (OpenTelemetry)', () => {
  let receiver: Receiver;
  let collector: Awaited<ReturnType<typeof startCollector>>;

  beforeAll(async () => {
    receiver = await startReceiver();
    collector = await startCollector();
  });
  afterAll(async () => {
    await receiver.close();
    await collector.close();
  });

  /** A send with `traceparent`; the worker, told by its task.created webhook, replies continuing that webhook's trace. */
  async function sendAndReply(t: TestApp, requester: Agent, worker: Agent, traceparent: string) {
    const created = await subscribe(t, receiver, apiKey(worker.key), { events: ['task.created'] });
    const statuses = await subscribe(t, receiver, apiKey(requester.key), { events: ['task.status'] });
    const sent = await rpc(t, worker.handle, requester.key, 'message/send', {
      message: v03Message('traced'),
      configuration: { blocking: false },
    })
      .set('traceparent', traceparent)
      .expect(200);
    const taskId: string = sent.body.result.id;
    await created.take(1);
    // The requester also asks for A2A push notifications of the task's updates.
    const pushPath = `/push/${taskId}`;
    await rpc(t, worker.handle, requester.key, 'tasks/pushNotificationConfig/set', {
      taskId,
      pushNotificationConfig: { id: 'traced', url: new URL(pushPath, receiver.url).href },
    }).expect(200);
    const [createdRequest] = created.requests();
    const onward = createdRequest.headers.traceparent as string | undefined;
    const answer = reply(t, taskId, worker.key, {
      state: 'completed',
      message: { parts: [{ kind: 'text', text: 'done' }] },
    });
    if (onward) {
      answer.set('traceparent', onward);
    }
    await answer.expect(200);
    await statuses.take(1);
    const [statusRequest] = statuses.requests();
    const [pushRequest] = (await receiver.waitFor((all) => all.some((r) => r.path === pushPath))).filter(
      (r) => r.path === pushPath,
    );
    const events = (await t.db.query('SELECT seq, trace_id, kind FROM task_events WHERE task_id = $1 ORDER BY seq', [
      taskId,
    ])) as Array<{ seq: number; trace_id: string | null }>;
    return { taskId, createdRequest, statusRequest, pushRequest, events };
  }

  describe('without OTEL_EXPORTER_OTLP_ENDPOINT', () => {
    let t: TestApp;
    let tracing: Tracing;

    beforeAll(async () => {
      const config = loadConfig({ ...APP_ENV });
      expect(config.tracing).toEqual({ endpoint: null, serviceName: 'a2a-service' });
      tracing = startTracing(config.tracing);
      t = await startApp(APP_ENV);
    });
    afterAll(async () => {
      await t.close();
      await tracing.shutdown();
    });

    it("starts nothing, exports nothing and stores no trace; a caller's traceparent changes nothing", async () => {
      expect(tracing.enabled).toBe(false);
      const { requester, worker } = await agentPair(t);
      const { traceparent } = newTraceparent();
      const { createdRequest, statusRequest, pushRequest, events } = await sendAndReply(
        t,
        requester,
        worker,
        traceparent,
      );
      expect(createdRequest.headers.traceparent).toBeUndefined();
      expect(pushRequest.headers.traceparent).toBeUndefined();
      expect(statusRequest.headers.traceparent).toBeUndefined();
      expect(events.length).toBeGreaterThanOrEqual(2);
      expect(events.every((e) => e.trace_id === null)).toBe(true);
      const [{ count }] = (await t.db.query(
        'SELECT count(*)::int AS count FROM events WHERE traceparent IS NOT NULL',
      )) as Array<{ count: number }>;
      expect(count).toBe(0);
      await tracing.forceFlush();
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(collector.requests).toEqual([]);
    });
  });

  describe('with OTEL_EXPORTER_OTLP_ENDPOINT', () => {
    let t: TestApp;
    let tracing: Tracing;

    beforeAll(async () => {
      const env = {
        ...APP_ENV,
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
        OTEL_SERVICE_NAME: 'a2a-tracing-test',
        GRPC_PORT: '0',
        GRPC_HOST: '127.0.0.1',
      };
      tracing = startTracing(loadConfig(env).tracing);
      t = await startApp(env);
    });
    afterAll(async () => {
      await t.close();
      await tracing.shutdown();
    });

    it("one trace from the send through the task events and the webhooks to the worker's reply", async () => {
      expect(tracing.enabled).toBe(true);
      const { requester, worker } = await agentPair(t);
      const { traceId, traceparent } = newTraceparent();
      const { taskId, createdRequest, statusRequest, pushRequest, events } = await sendAndReply(
        t,
        requester,
        worker,
        traceparent,
      );

      // The webhooks carry the trace onward: the send's to the worker, the reply's to the requester.
      expect(traceIdOf(createdRequest.headers.traceparent)).toBe(traceId);
      expect(traceIdOf(statusRequest.headers.traceparent)).toBe(traceId);
      expect(traceIdOf(pushRequest.headers.traceparent)).toBe(traceId);
      expect(createdRequest.headers.traceparent).not.toBe(traceparent); // a span of the service's own: the delivery
      // The task's events record it: the send's and the reply's.
      expect(events.length).toBeGreaterThanOrEqual(2);
      expect(events.map((e) => e.trace_id)).toEqual(events.map(() => traceId));

      // A delivery's span ends once its outcome is recorded, just after the receiver saw it.
      const expected = [
        'POST /a2a/:handle',
        'a2a message/send',
        'admission',
        'POST /api/v1/tasks/:id/reply',
        'webhook delivery',
        'push notification delivery',
      ];
      const traced = () => collector.spans.filter((s) => s.traceId === traceId);
      const awaited = [...expected, 'KeysRepository.findByHashes'];
      for (let tries = 0; tries < 50 && !awaited.every((name) => traced().some((s) => s.name === name)); tries++) {
        await tracing.forceFlush();
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const spans = traced();
      const names = spans.map((s) => s.name);
      expect(names).toEqual(
        expect.arrayContaining([
          'POST /a2a/:handle',
          'a2a message/send',
          'admission',
          'POST /api/v1/tasks/:id/reply',
          'webhook delivery',
          'push notification delivery',
        ]),
      );
      // Database spans are named by the repository method, never by values.
      expect(names.some((name) => /^[A-Z]\w+Repository\.\w+$/.test(name))).toBe(true);
      expect(names.some((name) => name.includes(taskId))).toBe(false);
      expect(new Set(spans.map((s) => s.serviceName))).toEqual(new Set(['a2a-tracing-test']));
      // The send's HTTP span continues the caller's span.
      const parent = traceparent.split('-')[2];
      const send = spans.find((s) => s.name === 'POST /a2a/:handle');
      expect(send?.parentSpanId).toBe(parent);
      // Its API key, read as it arrived detached from the request object (AuthService.begin), in its span.
      expect(spans.filter((s) => s.name === 'KeysRepository.findByHashes').map((s) => s.parentSpanId)).toContain(
        send?.spanId,
      );
      expect(
        collector.requests.every((r) => r.path === '/v1/traces' && r.contentType.startsWith('application/json')),
      ).toBe(true);
    });

    it("a forward to an upstream agent continues the send's trace", async () => {
      const upstream = await startUpstreamAgent(await freePort());
      try {
        const acme = await signup(t);
        const { requester, worker: bridged } = await agentPair(t, acme);
        await t
          .http()
          .put(`/api/v1/identities/${bridged.handle}/upstream`)
          .set(bearer(acme))
          .send({
            url: upstream.url,
            card_url: upstream.cardUrl,
            auth: { type: 'bearer', value: 'upstream-secret-token-123' },
          })
          .expect(200);
        const { traceId, traceparent } = newTraceparent();
        await rpc(t, bridged.handle, requester.key, 'message/send', {
          message: v03Message('forward me'),
          configuration: { blocking: false },
        })
          .set('traceparent', traceparent)
          .expect(200);
        const [seen] = await eventually(
          async () => upstream.received,
          (received) => received.length > 0,
        );
        expect(traceIdOf(seen.headers.traceparent)).toBe(traceId);
      } finally {
        await upstream.close();
      }
    });

    it('a gRPC call continues the traceparent of its metadata', async () => {
      const { requester, worker } = await agentPair(t);
      const { traceId, traceparent } = newTraceparent();
      const client = grpcClient(t);
      try {
        const sent = await unary(
          client,
          'sendMessage',
          SendMessageRequest.fromJSON({
            tenant: worker.handle,
            message: v1Message('over gRPC'),
            configuration: { returnImmediately: true },
          }),
          metadataOf({ ...apiKey(requester.key), traceparent }),
        );
        expect(sent.code).toBe(0);
      } finally {
        client.close();
      }
      const [{ count }] = (await t.db.query('SELECT count(*)::int AS count FROM task_events WHERE trace_id = $1', [
        traceId,
      ])) as Array<{ count: number }>;
      expect(count).toBeGreaterThan(0);
      await tracing.forceFlush();
      const call = collector.spans.find((s) => s.traceId === traceId && s.name.startsWith('a2a grpc '));
      expect(call?.parentSpanId).toBe(traceparent.split('-')[2]);
    });

    it("every log line of a request, its `request` line too, carries its span's trace id", async () => {
      const lines: string[] = [];
      const logged = await startApp(
        { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_SERVICE_NAME: 'a2a-tracing-test' },
        t,
        createLogger('debug', logLines(lines)),
      );
      try {
        const { requester, worker } = await agentPair(logged);
        // No traceparent: the trace id is the request span's own. The params are refused after the body is read.
        const res = await rpc(logged, worker.handle, requester.key, 'tasks/get', { id: 5 }).set(
          'x-request-id',
          'traced-logs-0001',
        );
        expect(res.body.error.code).toBe(-32602);
        const during = await eventually(
          async () =>
            lines
              .map((line) => JSON.parse(line) as Record<string, unknown>)
              .filter((e) => e.request_id === 'traced-logs-0001'),
          (entries) => entries.some((e) => e.msg === 'request'),
        );
        expect(during.map((e) => e.msg)).toEqual(expect.arrayContaining(['protocol params refused', 'request']));
        const traceId = during[0].trace_id;
        expect(traceId).toMatch(/^[0-9a-f]{32}$/);
        expect(during.every((e) => e.trace_id === traceId)).toBe(true);
        await tracing.forceFlush();
        expect(collector.spans.some((s) => s.traceId === traceId && s.name === 'POST /a2a/:handle')).toBe(true);
      } finally {
        await logged.close();
      }
    });

    it('a request without traceparent starts a trace of its own, which its webhooks carry', async () => {
      const { requester, worker } = await agentPair(t);
      const created = await subscribe(t, receiver, apiKey(worker.key), { events: ['task.created'] });
      const sent = await rpc(t, worker.handle, requester.key, 'message/send', {
        message: v03Message('untraced'),
        configuration: { blocking: false },
      }).expect(200);
      await created.take(1);
      const traceId = traceIdOf(created.requests()[0].headers.traceparent);
      expect(traceId).toMatch(/^[0-9a-f]{32}$/);
      const [row] = (await t.db.query('SELECT trace_id FROM task_events WHERE task_id = $1 AND seq = 1', [
        sent.body.result.id,
      ])) as Array<{ trace_id: string }>;
      expect(row.trace_id).toBe(traceId);
    });
  });
});
