import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Principal } from './principal';

declare module 'express-serve-static-core' {
  interface Request {
    id: string;
    principal?: Principal;
    startedAt: bigint;
    /** The request's log context (the one its AsyncLocalStorage scope holds). */
    context?: RequestContext;
  }
}

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/;

/**
 * What every log line written while serving one request (HTTP, SSE stream or gRPC
 * call) carries: its id, its trace id and, once authenticated, its principal. Kept in
 * an AsyncLocalStorage, so a log call anywhere below the handler gets it without
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
 * What one async context carries: the request being served, and tracing's context
 * (OpenTelemetry's `Context`, opaque here). Both live in this one AsyncLocalStorage —
 * tracing's context manager keeps its context here (tracing/request-scoped-context.ts)
 * instead of in a storage of its own — so each async resource carries one store, and
 * entering the request's scope again (`requestContextMiddleware`) restores both.
 * A scope is never changed: entering a new request or trace context makes a new one.
 */
interface Scope {
  readonly request?: RequestContext;
  readonly trace?: unknown;
}

const storage = new AsyncLocalStorage<Scope>();

/** The scope a request's middleware entered, to enter again after the body parser. */
const SCOPE = Symbol('scope');
type ScopedRequest = Request & { [SCOPE]?: Scope };

/** The context of the request being served here, if any. */
export function currentRequestContext(): RequestContext | undefined {
  return storage.getStore()?.request;
}

/** Runs `fn` (and everything it starts) inside the request context `context`; the trace context stays. */
export function runInRequestContext<T>(context: RequestContext, fn: () => T): T {
  return storage.run({ request: context, trace: storage.getStore()?.trace }, fn);
}

/** Tracing's context here (its context manager's `active()`); undefined outside any. */
export function currentTraceContext(): unknown {
  return storage.getStore()?.trace;
}

/** Runs `fn(...args)` with `trace` as tracing's context (its context manager's `with`); the request context stays. */
export function runInTraceContext<A extends unknown[], T>(trace: unknown, fn: (...args: A) => T, ...args: A): T {
  return storage.run({ request: storage.getStore()?.request, trace }, fn, ...args);
}

/**
 * The seam for tracing: reads the trace id of a tracing context (the active span's).
 * Tracing registers one when it starts (`setActiveTraceIdSource`); until then, and for
 * lines outside any span, the trace id of the request's `traceparent` header is used.
 */
let activeTraceId: (trace: unknown) => string | undefined = () => undefined;
export function setActiveTraceIdSource(source: (trace: unknown) => string | undefined): void {
  activeTraceId = source;
}

/** The trace id for a log line written now: the active span's, else the request's `traceparent`'s. */
export function currentTraceId(): string | undefined {
  const scope = storage.getStore();
  return activeTraceId(scope?.trace) ?? scope?.request?.traceId;
}

/**
 * The trace id of a request's own scope (its HTTP span's, else its `traceparent`'s), for
 * what runs outside it: a response's `finish` listener runs in whichever async context
 * ended the response.
 */
export function requestTraceId(req: Request): string | undefined {
  const scope = (req as ScopedRequest)[SCOPE];
  return activeTraceId(scope?.trace) ?? req.context?.traceId;
}

/** W3C trace context: `version-traceid-parentid-flags`; the all-zero trace id is invalid. */
const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/;
export function traceIdOf(traceparent: string | string[] | undefined): string | undefined {
  if (typeof traceparent !== 'string') return undefined;
  const match = TRACEPARENT.exec(traceparent.trim());
  return match && !/^0+$/.test(match[1]) ? match[1] : undefined;
}

/** Gives every request an id (a caller's safe `X-Request-Id` is kept), echoes it, and starts its log context. */
export function requestIdMiddleware(req: Request, res: Response, next: NextFunction): void {
  const inbound = req.header('x-request-id');
  req.id = inbound && SAFE_REQUEST_ID.test(inbound) ? inbound : randomUUID();
  req.startedAt = process.hrtime.bigint();
  res.setHeader('X-Request-Id', req.id);
  const context: RequestContext = {
    requestId: req.id,
    traceId: traceIdOf(req.header('traceparent')),
    get principal() {
      const principal = req.principal;
      return principal ? { kind: principal.kind, id: principal.id } : undefined;
    },
  };
  Object.defineProperty(context, 'request', { value: req, enumerable: false });
  req.context = context;
  const scope: Scope = { request: context, trace: storage.getStore()?.trace };
  (req as ScopedRequest)[SCOPE] = scope;
  storage.run(scope, next);
}

/**
 * Enters the request's scope again — its log context and its trace context (the HTTP
 * span). Stream callbacks (a body parser's `end`) run in the socket's async context,
 * not the middleware's: this goes right after the body parser so what follows —
 * guards, handlers — is inside the request's context.
 */
export function requestContextMiddleware(req: Request, _res: Response, next: NextFunction): void {
  const scope = (req as ScopedRequest)[SCOPE];
  if (scope) storage.run(scope, next);
  else next();
}
