import { A2AError } from '@a2a-js/sdk/errors';
import { ServerCallContext, type A2ARequestHandler } from '@a2a-js/sdk/server';
import type { Binding, Metrics, ProtocolOutcome } from '../metrics/metrics';
import { callOf } from './call-context';
import { CallRefused } from './call-standing';

/** The handler's methods that serve a call (`getAgentCard` serves the binding's own card, not a call). */
const UNARY = [
  'sendMessage',
  'getTask',
  'listTasks',
  'cancelTask',
  'getAuthenticatedExtendedAgentCard',
  'createTaskPushNotificationConfig',
  'getTaskPushNotificationConfig',
  'listTaskPushNotificationConfigs',
  'deleteTaskPushNotificationConfig',
] as const;
const STREAMS = ['sendMessageStream', 'resubscribe'] as const;

/**
 * The request handler as one binding sees it, counting each protocol method call
 * (a2a_protocol_calls_total) by the handler's method name — the same names for every
 * binding and A2A version — with its version, binding and outcome: `ok`, `error` (an
 * A2A error answered), `refused` (the call lost its standing) or `internal`.
 * A stream is counted when it ends.
 */
export function meteredHandler<H extends A2ARequestHandler>(handler: H, binding: Binding, metrics: Metrics): H {
  if (!metrics.enabled) {
    return handler;
  }
  const record = (method: string, args: unknown[], outcome: ProtocolOutcome) => {
    const context = args.find((arg): arg is ServerCallContext => arg instanceof ServerCallContext);
    let version = 'unknown';
    try {
      if (context) {
        version = callOf(context).version;
      }
    } catch {
      // A context without a call (none in this service): counted as `unknown`.
    }
    metrics.protocolCall(method, version, binding, outcome);
  };
  const wrapped = Object.create(handler) as H;
  const target = wrapped as unknown as Record<string, (...args: unknown[]) => unknown>;
  const original = handler as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const method of UNARY) {
    target[method] = async (...args: unknown[]) => {
      try {
        const result = await original[method].apply(handler, args);
        record(method, args, 'ok');
        return result;
      } catch (error) {
        record(method, args, outcomeOf(error));
        throw error;
      }
    };
  }
  for (const method of STREAMS) {
    target[method] = (...args: unknown[]) =>
      metered(original[method].apply(handler, args) as AsyncGenerator<unknown, void, undefined>, (outcome) =>
        record(method, args, outcome),
      );
  }
  return wrapped;
}

async function* metered<T>(
  events: AsyncGenerator<T, void, undefined>,
  done: (outcome: ProtocolOutcome) => void,
): AsyncGenerator<T, void, undefined> {
  let outcome: ProtocolOutcome = 'ok';
  try {
    yield* events;
  } catch (error) {
    outcome = outcomeOf(error);
    throw error;
  } finally {
    done(outcome);
  }
}

function outcomeOf(error: unknown): ProtocolOutcome {
  if (error instanceof CallRefused) {
    return 'refused';
  }
  return error instanceof A2AError ? 'error' : 'internal';
}
