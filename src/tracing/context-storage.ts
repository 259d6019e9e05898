import { AsyncLocalStorage } from 'node:async_hooks';
import { isSpanContextValid, ROOT_CONTEXT, trace, type Context, type ContextManager } from '@opentelemetry/api';

/**
 * The process's one AsyncLocalStorage: it holds an OpenTelemetry `Context`, in which
 * tracing keeps the active span and common/request-context.ts the request being served
 * (a value of its own). One storage rather than one each means one store carried by
 * every promise and callback, and that entering a request's context again after the
 * body parser restores its log context and its HTTP span at once. It is used whether
 * tracing is on or off; with tracing on, `StorageContextManager` is OpenTelemetry's
 * context manager over it.
 */
const storage = new AsyncLocalStorage<Context>();

/** The context here; the root context outside any. */
export function activeContext(): Context {
  return storage.getStore() ?? ROOT_CONTEXT;
}

/** Runs `fn` (and everything it starts) in `context`. */
export function runInContext<T>(context: Context, fn: () => T): T {
  return storage.run(context, fn);
}

/** The trace id of the span a context holds (none when tracing is off: no span is ever set). */
export function traceIdIn(context: Context): string | undefined {
  const span = trace.getSpan(context)?.spanContext();
  return span && isSpanContextValid(span) ? span.traceId : undefined;
}

/**
 * OpenTelemetry's context manager over that storage (the SDK's own keeps a second
 * one). Event emitters are not patched — `bind` binds functions only: a listener runs
 * in the context of whatever emits, for spans as for the request context, and what a
 * response's `finish` listener needs reads the request's context instead.
 */
export class StorageContextManager implements ContextManager {
  active(): Context {
    return activeContext();
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    context: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return storage.run(context, thisArg === undefined ? fn : fn.bind(thisArg), ...args);
  }

  bind<T>(context: Context, target: T): T {
    if (typeof target !== 'function') {
      return target;
    }
    const fn = target as (...args: unknown[]) => unknown;
    return function bound(this: unknown, ...args: unknown[]) {
      return storage.run(context, () => fn.apply(this, args));
    } as T;
  }

  enable(): this {
    return this;
  }

  /** The storage outlives tracing (the request context lives in it): nothing to release. */
  disable(): this {
    return this;
  }
}
