import type { UsageMeter } from '../usage/usage-meter';
import type { ProtocolCall } from './call-context';

/**
 * Runs a send's write; a send over its requester's budget (docs/api.md §18) is refused
 * as the call's own refusal — HTTP 429 with the JSON-RPC error body, 429 on the
 * HTTP+JSON binding, RESOURCE_EXHAUSTED on gRPC, reason `quota_exceeded` with
 * `resets_at` — as the checks before the method refuse, not as an A2A error.
 */
export async function refusingOverBudget<T>(usage: UsageMeter, call: ProtocolCall, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    const refusal = usage.refusal(error);
    throw refusal ? call.standing.refuse(refusal) : error;
  }
}
