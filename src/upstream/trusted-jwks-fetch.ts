import { systemResolver } from '../events/delivery-sender';
import { upstreamFetch } from './upstream-fetch';

const FETCH_TIMEOUT_MS = 5_000;
const MAX_JWKS_BYTES = 256 * 1024;

/**
 * How a JWK Set at an address a tenant gave is fetched (a trusted issuer's `jwks_uri`,
 * docs/api.md §17; an upstream's `trusted_jwks_uri`, §14): the webhook address rules
 * (upstreamFetch: https only, public addresses only unless WEBHOOKS_ALLOW_PRIVATE_NETWORKS,
 * no redirects), within 5 s and 256 KiB; an answer other than 2xx is an error.
 */
export function trustedJwksFetch(allowPrivateNetworks: boolean): (uri: string) => Promise<unknown> {
  const fetch = upstreamFetch({
    allowPrivateNetworks,
    resolve: systemResolver,
    timeoutMs: FETCH_TIMEOUT_MS,
    maxResponseBytes: MAX_JWKS_BYTES,
  });
  return async (uri) => {
    const res = await fetch(uri, { headers: { accept: 'application/json' } });
    if (!res.ok) {
      throw new Error(`HTTP ${res.status}`);
    }
    return res.json();
  };
}
