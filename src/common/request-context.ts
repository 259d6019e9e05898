import { randomUUID } from 'node:crypto';
import { createContextKey, type Context } from '@opentelemetry/api';
import type { NextFunction, Request, Response } from 'express';
import { activeContext, runInContext, traceIdIn } from '../tracing/context-storage';
import type { Principal } from './principal';

declare module 'express-serve-static-core' {
  interface Request {
    id: string;
    principal?: Principal;
    startedAt: bigint;
    /** The request's log context (the value its async context holds). */
    context?: RequestContext;
  }
}

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/;

/**
 * What every log line written while serving one request (HTTP, SSE stream or gRPC
 * call) carries: its id, its trace id and, once authenticated, its principal. Kept in
 * the async context (below), so a log call anywhere below the handler gets it without
 * passing it along; the logger's `mixin` adds it to each line (logger.ts).
 */
export interface RequestContext {
  readonly requestId: string;
  /** The trace id of the caller's W3C `traceparent`, when it sent a valid one. */
  readonly traceId?: string;
  /** Read when a line is written: set by authentication after the context began. */
  readonly principal?: { kind: string; id: string };
  /** The HTTP request itself (the audit log reads its principal, id and client address); none for a gRPC call. */
  readonly request?: Request;
}

/**
 * The request context is a value of the process's one async context (an OpenTelemetry
 * `Context` in tracing/context-storage.ts's AsyncLocalStorage), next to the active span
 * when tracing is on: one storage for both, so a context switch for a span keeps the
 * request's, and entering the request's context again restores both.
 */
const REQUEST = createContextKey('a2a request context');

/** The context a request's middleware entered, to enter again after the body parser. */
const ENTERED = Symbol('entered context');
type EnteredRequest = Request & { [ENTERED]?: Context };

/**
 * Runs `fn` (and everything it starts) in the request's log context — its request id and
 * trace id; the active span stays — without the request itself: what `fn` makes holds
 * none of the request's objects. For work begun early and held for later in the
 * request (AuthService.begin): a promise held from the request, made in a context that
 * holds the request, kept the request's objects through young-generation collections
 * until a full one (BENCHMARKS.md, "Requests kept for a full collection").
 */
export function detachedFromRequest<T>(fn: () => T): T {
  const context = currentRequestContext();
  if (!context) {
    return fn();
  }
  const detached: RequestContext = { requestId: context.requestId, traceId: context.traceId };
  return runInContext(activeContext().setValue(REQUEST, detached), fn);
}

/** The context of the request being served here, if any. */
export function currentRequestContext(): RequestContext | undefined {
  return activeContext().getValue(REQUEST) as RequestContext | undefined;
}

/** Runs `fn` (and everything it starts) inside the request context `context`; the active span stays. */
export function runInRequestContext<T>(context: RequestContext, fn: () => T): T {
  return runInContext(activeContext().setValue(REQUEST, context), fn);
}

/** The trace id for a log line written now: the active span's, else the request's `traceparent`'s. */
export function currentTraceId(): string | undefined {
  const active = activeContext();
  return traceIdIn(active) ?? (active.getValue(REQUEST) as RequestContext | undefined)?.traceId;
}

/**
 * The trace id of a request's own context (its HTTP span's, else its `traceparent`'s),
 * for what runs outside it: a response's `finish` listener runs in whichever async
 * context ended the response.
 */
export function requestTraceId(req: Request): string | undefined {
  const entered = (req as EnteredRequest)[ENTERED];
  return (entered && traceIdIn(entered)) ?? req.context?.traceId;
}

/** W3C trace context: `version-traceid-parentid-flags`; the all-zero trace id is invalid. */
const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/;
export function traceIdOf(traceparent: string | string[] | undefined): string | undefined {
  if (typeof traceparent !== 'string') {
    return undefined;
  }
  const match = TRACEPARENT.exec(traceparent.trim());
  return match && !/^0+$/.test(match[1]) ? match[1] : undefined;
}

/**
 * An HTTP request's context: its principal read when a line is written (authentication
 * sets it later); the request itself on the prototype, so it is no own property for
 * whatever copies or prints the context. (An object literal with a getter and a
 * non-enumerable property defined on it took V8 ~1.3 µs a request; this, ~0.05.)
 */
class HttpRequestContext implements RequestContext {
  readonly requestId: string;
  readonly traceId: string | undefined;
  readonly #request: Request;

  constructor(request: Request) {
    this.#request = request;
    this.requestId = request.id;
    this.traceId = traceIdOf(request.header('traceparent'));
  }

  get principal(): { kind: string; id: string } | undefined {
    const principal = this.#request.principal;
    return principal ? { kind: principal.kind, id: principal.id } : undefined;
  }

  get request(): Request {
    return this.#request;
  }
}

/** Gives every request an id (a caller's safe `X-Request-Id` is kept), echoes it, and starts its log context. */
export function requestIdMiddleware(req: Request, res: Response, next: NextFunction): void {
  const inbound = req.header('x-request-id');
  req.id = inbound && SAFE_REQUEST_ID.test(inbound) ? inbound : randomUUID();
  req.startedAt = process.hrtime.bigint();
  res.setHeader('X-Request-Id', req.id);
  const context = new HttpRequestContext(req);
  req.context = context;
  const entered = activeContext().setValue(REQUEST, context);
  (req as EnteredRequest)[ENTERED] = entered;
  runInContext(entered, next);
}

/**
 * Enters the request's context again — its log context and its HTTP span. Stream
 * callbacks (a body parser's `end`) run in the socket's async context, not the
 * middleware's: this goes right after the body parser so what follows — guards,
 * handlers — is inside the request's context.
 */
export function requestContextMiddleware(req: Request, _res: Response, next: NextFunction): void {
  const entered = (req as EnteredRequest)[ENTERED];
  if (entered) {
    runInContext(entered, next);
  } else {
    next();
  }
}
