/**
 * A tiny fetch client for a server running in another process (crash test, load
 * benchmark): JSON in, `{status, body}` out, with an API key or a Console token.
 */
export interface CallOptions {
  method?: string;
  key?: string;
  token?: string;
  body?: unknown;
}

/** One call of httpClient's: a path, and what to send. */
export type HttpCall = (path: string, init?: CallOptions) => Promise<{ status: number; body: any }>;

export function httpClient(base: string): HttpCall {
  return async (path, init = {}) => {
    const res = await fetch(base + path, {
      method: init.method ?? 'GET',
      headers: {
        'content-type': 'application/json',
        ...(init.key ? { 'x-api-key': init.key } : {}),
        ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
      },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
    return { status: res.status, body: await res.json().catch(() => null) };
  };
}
