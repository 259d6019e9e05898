import {
  context,
  isSpanContextValid,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
  type SpanOptions,
  type Tracer,
} from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { NextFunction, Request, Response } from 'express';
import type { AppConfig } from '../config/config';
import { StorageContextManager, traceIdIn } from './context-storage';

/**
 * Tracing with OpenTelemetry (docs/operations.md, "Tracing"), in one place. `startTracing` runs before
 * Nest starts (main.ts, worker.ts). With OTEL_EXPORTER_OTLP_ENDPOINT set it registers
 * the SDK — its context in the process's one AsyncLocalStorage, shared with the
 * request context (context-storage.ts), the W3C `traceparent` propagator, a batch
 * OTLP/HTTP (JSON) exporter — and every helper below records spans. Without it
 * nothing is started, `@opentelemetry/api` stays a no-op, and the helpers cost one
 * boolean test: no span, no header, no trace id stored.
 *
 * Spans are made by hand at the seams (no auto-instrumentation): the HTTP request
 * (`httpTracing`), the protocol method, admission, every repository method
 * (`@GenerateSql`), each delivery and each upstream call. The trace is carried into
 * the ledger's task events (`trace_id`), the outbox (`traceparent`, sent on every
 * webhook and push request by whichever process delivers it) and upstream calls.
 */

export interface Tracing {
  /** Whether an SDK was started (an endpoint was configured). */
  readonly enabled: boolean;
  /** Exports the spans ended so far. */
  forceFlush(): Promise<void>;
  /** Exports what is left, then unregisters the SDK (the API is a no-op again). */
  shutdown(): Promise<void>;
}

let provider: NodeTracerProvider | null = null;

const OFF: Tracing = { enabled: false, forceFlush: async () => undefined, shutdown: async () => undefined };

/**
 * The started provider's own tracer, not the API's proxy (`trace.getTracer`): a proxy
 * keeps the first provider it reached, so after a restart (tests, the observability
 * bench) its spans went to a provider that was shut down; and each call through it
 * costs a lookup more.
 */
let tracer: Tracer = trace.getTracer('a2a-service');

/** Starts the SDK when an endpoint is configured; otherwise does nothing at all. */
export function startTracing(settings: AppConfig['tracing']): Tracing {
  if (!settings.endpoint) {
    return OFF;
  }
  if (provider) {
    throw new Error('tracing is already started in this process');
  }
  const exporter = new OTLPTraceExporter({ url: `${settings.endpoint.replace(/\/+$/, '')}/v1/traces` });
  const started = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': settings.serviceName }),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  started.register({ contextManager: new StorageContextManager() });
  tracer = started.getTracer('a2a-service');
  provider = started;
  return {
    enabled: true,
    forceFlush: () => started.forceFlush(),
    shutdown: async () => {
      if (provider !== started) {
        return;
      }
      provider = null;
      try {
        await started.shutdown();
      } finally {
        trace.disable();
        context.disable();
        propagation.disable();
      }
    },
  };
}

/** Whether spans are being recorded in this process. */
export function tracingEnabled(): boolean {
  return provider !== null;
}

/**
 * `inSpan` for a leaf: a span that starts no child (a repository method's
 * statements), so it is not made the active context — no context switch per call.
 * Only inside a recorded trace: outside any span (the dispatcher's and the forwarder's
 * polls, retention) a leaf would be a trace of one span each time, noise at a cost;
 * under a span the sampler left out it would be left out too.
 */
export async function inLeafSpan<T>(name: string, options: SpanOptions, work: () => Promise<T>): Promise<T> {
  if (!provider) {
    return work();
  }
  const parent = context.active();
  if (!trace.getSpan(parent)?.isRecording()) {
    return work();
  }
  const span = tracer.startSpan(name, options, parent);
  try {
    return await work();
  } catch (error) {
    span.recordException(error instanceof Error ? error : String(error));
    span.setStatus({ code: SpanStatusCode.ERROR });
    throw error;
  } finally {
    span.end();
  }
}

/**
 * Runs `work` in a new span (a child of `parent`, by default the active context) and
 * ends it when `work` settles; a thrown error marks it failed. Off: runs `work` alone.
 */
export async function inSpan<T>(
  name: string,
  options: SpanOptions,
  work: (span?: Span) => Promise<T>,
  parent?: Context,
): Promise<T> {
  if (!provider) {
    return work();
  }
  return tracer.startActiveSpan(name, options, parent ?? context.active(), async (span) => {
    try {
      return await work(span);
    } catch (error) {
      span.recordException(error instanceof Error ? error : String(error));
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** The trace id of the active span (what the ledger's task events record); null when tracing is off. */
export function currentTraceId(): string | null {
  if (!provider) {
    return null;
  }
  return traceIdIn(context.active()) ?? null;
}

/** The active span as a W3C `traceparent` (what the outbox keeps for deliveries); null when tracing is off. */
export function currentTraceparent(): string | null {
  if (!provider) {
    return null;
  }
  const active = trace.getActiveSpan()?.spanContext();
  if (!active || !isSpanContextValid(active)) {
    return null;
  }
  return `00-${active.traceId}-${active.spanId}-${(active.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/** The context an inbound `traceparent` (HTTP headers, gRPC metadata, a stored value) names; the active one without it. */
export function contextFrom(carrier: Record<string, unknown>): Context {
  return propagation.extract(context.active(), carrier, {
    get: (from, key) => {
      const value = from[key];
      return typeof value === 'string' || Array.isArray(value) ? (value as string | string[]) : undefined;
    },
    keys: (from) => Object.keys(from),
  });
}

/** The headers that carry the active trace onward (`traceparent`, `tracestate`); none when tracing is off. */
export function traceHeaders(): Record<string, string> {
  const headers: Record<string, string> = {};
  if (provider) {
    propagation.inject(context.active(), headers);
  }
  return headers;
}

/**
 * A delivery of an outbox event or push notification, in the trace of the change that
 * caused it (`traceparent` as stored with it): a CLIENT span when tracing is on, whose
 * context the request carries; off, the stored `traceparent` goes out as it is.
 */
export async function inDeliverySpan<T>(
  name: string,
  stored: string | null,
  attributes: SpanOptions['attributes'],
  work: (trace: { headers: Record<string, string>; span?: Span }) => Promise<T>,
): Promise<T> {
  if (!provider) {
    return work({ headers: stored ? { traceparent: stored } : {} });
  }
  const parent = stored ? propagation.extract(ROOT_CONTEXT, { traceparent: stored }) : ROOT_CONTEXT;
  return inSpan(name, { kind: SpanKind.CLIENT, attributes }, (span) => work({ headers: traceHeaders(), span }), parent);
}

/**
 * The HTTP request's span (SERVER), a child of the caller's `traceparent` when it
 * sends one, active for everything the request does: it is named by the route
 * template (`POST /api/v1/tasks/:id/reply`), never by ids. The request's context
 * (request-context.ts) keeps it, so it is active again after the body parser.
 */
export function httpTracing(req: Request, res: Response, next: NextFunction): void {
  if (!provider) {
    return next();
  }
  const parent = contextFrom(req.headers);
  const span = tracer.startSpan(
    req.method,
    {
      kind: SpanKind.SERVER,
      attributes: { 'http.request.method': req.method, 'url.scheme': req.protocol },
    },
    parent,
  );
  const active = trace.setSpan(parent, span);
  let ended = false;
  const end = () => {
    if (ended) {
      return;
    }
    ended = true;
    const route = req.route?.path ? `${req.baseUrl ?? ''}${String(req.route.path)}` : null;
    if (route) {
      span.setAttribute('http.route', route);
      span.updateName(`${req.method} ${route}`);
    }
    span.setAttribute('http.response.status_code', res.statusCode);
    if (res.statusCode >= 500) {
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end();
  };
  res.once('finish', end);
  res.once('close', end);
  context.with(active, next);
}
