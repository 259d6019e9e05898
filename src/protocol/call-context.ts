import { ServerCallContext } from '@a2a-js/sdk/server';
import type { AdmittedCall } from '../admission/admission.service';
import type { A2AVersion } from '../ledger/entities/push-notification-config.entity';
import type { TaskPair } from '../ledger/task-records';
import type { CallStanding } from './call-standing';

/**
 * What one protocol call is about, carried to the request handler through the SDK's
 * ServerCallContext (its `state` bag is meant for this).
 */
export interface ProtocolCall {
  pair: TaskPair;
  /** What the checks read to admit the call: its decisions per skill come from it (docs/api.md §16). */
  admitted: AdmittedCall;
  /**
   * The skill the call names, once a send has read it from its message (null: none);
   * absent for a call that names none of its own. Its standing is asked about this skill.
   */
  skill?: string | null;
  version: A2AVersion;
  /**
   * Whether a send waits for the worker. Read from the raw request: the SDK's v0.3
   * translation turns an absent `blocking` into "return immediately", while
   * docs/api.md §5 says a v0.3 send blocks unless `blocking` is false.
   */
  blocking: boolean;
  /** Aborted when the client goes away, the stream reaches its maximum duration, or the service shuts down. */
  signal: AbortSignal;
  /** Re-checks the caller's key, both identities and admission: a waiting call asks each time it wakes. */
  standing: CallStanding;
}

const CALL = 'a2a-service:call';

export function callContext(call: ProtocolCall): ServerCallContext {
  return new ServerCallContext({ requestedVersion: call.version, state: new Map([[CALL, call]]) });
}

export function callOf(context: ServerCallContext): ProtocolCall {
  const call = context.state.get(CALL) as ProtocolCall | undefined;
  if (!call) {
    throw new Error('protocol call context missing');
  }
  return call;
}
