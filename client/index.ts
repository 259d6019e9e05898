/**
 * The service's typed client: `paths` and `components` are generated from its OpenAPI
 * document (client/schema.ts, `npm run client:generate`); calls go through openapi-fetch.
 *
 *   const api = createApiClient({ baseUrl: 'https://a2a.example', apiKey: process.env.A2A_ADMIN_KEY });
 *   const { data, error } = await api.GET('/api/v1/identities/{handle}', { params: { path: { handle: 'acme-billing' } } });
 */
import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { paths } from './schema';

export type { components, operations, paths } from './schema';
export type ApiClient = Client<paths>;

export interface ApiClientOptions extends ClientOptions {
  /** An admin or agent key, sent as X-API-Key. */
  apiKey?: string;
  /** A Console session token, sent as a bearer token (the browser uses the HttpOnly cookie instead). */
  sessionToken?: string;
}

export function createApiClient({ apiKey, sessionToken, headers, ...options }: ApiClientOptions = {}): ApiClient {
  const auth: Record<string, string> = {};
  if (apiKey) {
    auth['X-API-Key'] = apiKey;
  }
  if (sessionToken) {
    auth.Authorization = `Bearer ${sessionToken}`;
  }
  return createClient<paths>({ ...options, headers: { ...auth, ...(headers as Record<string, string> | undefined) } });
}
