import type { AgentCard, StreamResponse } from '@a2a-js/sdk';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';
import type { AppError } from '../common/app-error';
import { CallRefused } from './call-standing';
import { callOf } from './call-context';
import type { LedgerRequestHandler } from './ledger-request-handler';

/** What a binding does for the shared handler while one of its calls runs. */
export interface BindingHooks {
  /**
   * The call lost its standing (CallStanding): answer with the refusal in the
   * binding's own form. Returns the error to throw to the SDK's transport, or null
   * when the call has been answered and a stream should just end.
   */
  refuse(refusal: AppError): Error | null;
  /** Resolves when the client can take the next stream event (back-pressure). */
  ready(signal: AbortSignal): Promise<void>;
}

const HOOKS = 'a2a-service:binding';

export function bindHooks(context: ServerCallContext, hooks: BindingHooks): void {
  context.state.set(HOOKS, hooks);
}

function hooksOf(context: ServerCallContext): BindingHooks {
  const hooks = context.state.get(HOOKS) as BindingHooks | undefined;
  if (!hooks) {
    throw new Error('binding hooks missing');
  }
  return hooks;
}

/** The versions each SDK transport checks `A2A-Version` against (its `validateVersion`). */
const INTERFACES = ['HTTP+JSON', 'GRPC'].flatMap((protocolBinding) =>
  ['1.0', '0.3'].map((protocolVersion) => ({ url: '', protocolBinding, protocolVersion, tenant: '' })),
);

/**
 * LedgerRequestHandler as the SDK's HTTP+JSON and gRPC transports see it: the same
 * handler, the same methods; a call that lost its standing ends in the binding's
 * form (the transports would call it an internal error), and streams go no faster
 * than the client reads.
 */
export class BindingRequestHandler implements A2ARequestHandler {
  constructor(private readonly ledger: LedgerRequestHandler) {}

  async getAgentCard(): Promise<AgentCard> {
    const card = await this.ledger.getAgentCard();
    return { ...card, supportedInterfaces: INTERFACES };
  }

  getAuthenticatedExtendedAgentCard(...args: Parameters<A2ARequestHandler['getAuthenticatedExtendedAgentCard']>) {
    const ledger: A2ARequestHandler = this.ledger;
    return this.unary(args[1], () => ledger.getAuthenticatedExtendedAgentCard(...args));
  }

  sendMessage(...args: Parameters<A2ARequestHandler['sendMessage']>) {
    return this.unary(args[1], () => this.ledger.sendMessage(...args));
  }

  sendMessageStream(...args: Parameters<A2ARequestHandler['sendMessageStream']>) {
    return this.stream(args[1], this.ledger.sendMessageStream(...args));
  }

  resubscribe(...args: Parameters<A2ARequestHandler['resubscribe']>) {
    return this.stream(args[1], this.ledger.resubscribe(...args));
  }

  getTask(...args: Parameters<A2ARequestHandler['getTask']>) {
    return this.unary(args[1], () => this.ledger.getTask(...args));
  }

  listTasks(...args: Parameters<A2ARequestHandler['listTasks']>) {
    return this.unary(args[1], () => this.ledger.listTasks(...args));
  }

  cancelTask(...args: Parameters<A2ARequestHandler['cancelTask']>) {
    return this.unary(args[1], () => this.ledger.cancelTask(...args));
  }

  createTaskPushNotificationConfig(...args: Parameters<A2ARequestHandler['createTaskPushNotificationConfig']>) {
    return this.unary(args[1], () => this.ledger.createTaskPushNotificationConfig(...args));
  }

  getTaskPushNotificationConfig(...args: Parameters<A2ARequestHandler['getTaskPushNotificationConfig']>) {
    return this.unary(args[1], () => this.ledger.getTaskPushNotificationConfig(...args));
  }

  listTaskPushNotificationConfigs(...args: Parameters<A2ARequestHandler['listTaskPushNotificationConfigs']>) {
    return this.unary(args[1], () => this.ledger.listTaskPushNotificationConfigs(...args));
  }

  deleteTaskPushNotificationConfig(...args: Parameters<A2ARequestHandler['deleteTaskPushNotificationConfig']>) {
    return this.unary(args[1], () => this.ledger.deleteTaskPushNotificationConfig(...args));
  }

  private async unary<T>(context: ServerCallContext, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (!(error instanceof CallRefused)) {
        throw error;
      }
      throw hooksOf(context).refuse(error.refusal) ?? error;
    }
  }

  private async *stream(
    context: ServerCallContext,
    events: AsyncGenerator<StreamResponse, void, undefined>,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const hooks = hooksOf(context);
    const { signal } = callOf(context);
    try {
      for await (const event of events) {
        yield event;
        await hooks.ready(signal);
      }
    } catch (error) {
      // Ended by the server (maximum duration, shutdown) or the client while it waited: nothing more to say.
      if (signal.aborted) {
        return;
      }
      if (!(error instanceof CallRefused)) {
        throw error;
      }
      const thrown = hooks.refuse(error.refusal);
      if (thrown) {
        throw thrown;
      }
    }
  }
}
