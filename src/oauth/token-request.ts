import { AppError, badRequest } from '../common/app-error';

/** A client credentials request (RFC 6749 §4.4), its client authenticated by key id and key. */
export interface TokenRequest {
  clientId: string;
  clientSecret: string;
  /** The scope asked for, if any (it must be the key's own). */
  scope: string | undefined;
  /** How the client authenticated: the challenge of a refusal names it (RFC 6749 §5.2). */
  viaBasic: boolean;
}

const GRANT = 'client_credentials';

/** The 401 of a client that does not authenticate (RFC 6749 §5.2, with its challenge). */
export function invalidClient(detail: string): AppError {
  return new AppError(401, 'invalid_client', detail, {
    headers: { 'WWW-Authenticate': 'Basic realm="oauth", charset="UTF-8"' },
  });
}

/**
 * Reads `POST /oauth/token` (docs/api.md §17): the form's parameters, each at most
 * once, and the client's credentials from HTTP Basic or the form (not both). Unknown
 * parameters are ignored, as RFC 6749 §3.2 asks.
 */
export function readTokenRequest(form: unknown, authorization: string | undefined): TokenRequest {
  const body = (typeof form === 'object' && form !== null ? form : {}) as Record<string, unknown>;
  const param = (name: string): string | undefined => {
    const value = body[name];
    if (value !== undefined && typeof value !== 'string') {
      throw badRequest('invalid_request', `The parameter ${name} is given more than once.`);
    }
    return value === '' ? undefined : value;
  };
  const grantType = param('grant_type');
  if (grantType === undefined) {
    throw badRequest('invalid_request', 'grant_type is required (client_credentials).');
  }
  if (grantType !== GRANT) {
    throw badRequest('unsupported_grant_type', 'Only grant_type=client_credentials is supported.');
  }
  const scope = param('scope');
  const formId = param('client_id');
  const formSecret = param('client_secret');
  const basic = authorization === undefined ? null : /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(authorization);
  if (authorization !== undefined) {
    if (!basic) {
      throw invalidClient('The Authorization header must be HTTP Basic with the key id and the key.');
    }
    if (formSecret !== undefined) {
      throw badRequest('invalid_request', 'Authenticate the client once: HTTP Basic or client_secret, not both.');
    }
    const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    const [id, secret] = colon < 0 ? [decoded, ''] : [decoded.slice(0, colon), decoded.slice(colon + 1)];
    const clientId = formUnescape(id);
    if (formId !== undefined && formId !== clientId) {
      throw badRequest('invalid_request', 'client_id differs from the client of HTTP Basic.');
    }
    return { clientId, clientSecret: formUnescape(secret), scope, viaBasic: true };
  }
  if (formId === undefined || formSecret === undefined) {
    throw invalidClient('Authenticate with client_id (the key id) and client_secret (the key), or HTTP Basic.');
  }
  return { clientId: formId, clientSecret: formSecret, scope, viaBasic: false };
}

/** RFC 6749 §2.3.1: Basic's id and secret are form-encoded first. */
function formUnescape(value: string): string {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    return value;
  }
}
