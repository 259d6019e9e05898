import type { User } from '@a2a-js/sdk/server';
import type { OpenCall } from './protocol-gate';

/** The SDK's view of the caller: the admitted call, handed to the context builder. */
class AdmittedCaller implements User {
  constructor(readonly open: OpenCall) {}
  get isAuthenticated(): boolean {
    return true;
  }
  get userName(): string {
    return this.open.call.pair.requester.handle;
  }
}

/**
 * The SDK transport options that hand a binding's admitted call to LedgerRequestHandler:
 * the binding keeps each call's OpenCall under its request (`admitted`) before the SDK
 * sees it; the user builder finds it there and the context builder passes its context on.
 */
export function admittedCallers<K extends object>(
  admitted: WeakMap<K, OpenCall>,
): {
  userBuilder: (request: K) => Promise<User>;
  contextBuilder: (built: { user?: User }) => OpenCall['context'];
} {
  return {
    userBuilder: async (request) => new AdmittedCaller(admitted.get(request)!),
    contextBuilder: ({ user }) => (user as AdmittedCaller).open.context,
  };
}
