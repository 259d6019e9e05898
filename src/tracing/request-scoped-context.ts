import { ROOT_CONTEXT, type Context, type ContextManager } from '@opentelemetry/api';
import { currentTraceContext, runInTraceContext } from '../common/request-context';

/**
 * OpenTelemetry's context manager, keeping the active Context in the request context's
 * AsyncLocalStorage (common/request-context.ts) rather than in a second one of its own:
 * every promise and callback then carries one store, not two, and the middleware that
 * enters a request's scope again after the body parser restores its log context and
 * its HTTP span at once.
 *
 * Event emitters are not patched (`bind` binds functions only): a listener runs in the
 * context of whatever emits, as it does for the request context. What runs in a
 * response's `finish` listener reads the request's scope instead (`requestTraceId`).
 */
export class RequestScopedContextManager implements ContextManager {
  active(): Context {
    return (currentTraceContext() as Context | undefined) ?? ROOT_CONTEXT;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    context: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return runInTraceContext(context, thisArg === undefined ? fn : fn.bind(thisArg), ...args);
  }

  bind<T>(context: Context, target: T): T {
    if (typeof target !== 'function') return target;
    const fn = target as (...args: unknown[]) => unknown;
    return function bound(this: unknown, ...args: unknown[]) {
      return runInTraceContext(context, () => fn.apply(this, args));
    } as T;
  }

  enable(): this {
    return this;
  }

  /** The storage is the request context's, which outlives tracing: nothing to release. */
  disable(): this {
    return this;
  }
}
