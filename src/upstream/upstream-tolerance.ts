/**
 * The forwarder's `fetch` around the guarded one (upstreamFetch). It notes each call
 * whose upstream answered with a 2xx status (`answered`, by the call's AbortSignal):
 * such an upstream has accepted the message, even when its body cannot be understood,
 * and the message must not be sent to it again.
 */
export function tolerantFetch(inner: typeof fetch, answered: WeakSet<AbortSignal>): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const response = await inner(input, init);
    if (response.ok && init?.signal) answered.add(init.signal);
    return response;
  }) as typeof fetch;
}
