import { AppError, badRequest } from '../common/app-error';
import { MAX_JWT_LENGTH } from '../common/jwt';

/** A token request: client credentials, or a trusted issuer's JWT exchanged (docs/api.md §17). */
export type TokenRequest = ClientCredentialsRequest | TokenExchangeRequest;

/** A client credentials request (RFC 6749 §4.4), its client authenticated by key id and key. */
export interface ClientCredentialsRequest {
  grant: 'client_credentials';
  clientId: string;
  clientSecret: string;
  /** The scope asked for, if any (it must be the key's own). */
  scope: string | undefined;
  /** How the client authenticated: the challenge of a refusal names it (RFC 6749 §5.2). */
  viaBasic: boolean;
}

/**
 * A token exchange request (RFC 8693 §2.1): a trusted issuer's JWT, the subject token,
 * for a service token. The subject token is its own proof; no client authenticates.
 */
export interface TokenExchangeRequest {
  grant: 'token_exchange';
  subjectToken: string;
  /** The scope asked for, if any (it must be `agent`, a federated identity's scope). */
  scope: string | undefined;
  /** `audience` and `resource` values (RFC 8693 §2.1; RFC 8707), each to be checked against the service. */
  audiences: string[];
  resources: string[];
}

export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const JWT_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:jwt';
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

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
    throw badRequest('invalid_request', `grant_type is required (client_credentials or ${TOKEN_EXCHANGE_GRANT}).`);
  }
  const scope = param('scope');
  if (grantType === TOKEN_EXCHANGE_GRANT) {
    return readExchange(body, param, authorization, scope);
  }
  if (grantType !== 'client_credentials') {
    throw badRequest(
      'unsupported_grant_type',
      `Only grant_type=client_credentials and grant_type=${TOKEN_EXCHANGE_GRANT} are supported.`,
    );
  }
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
    return { grant: 'client_credentials', clientId, clientSecret: formUnescape(secret), scope, viaBasic: true };
  }
  if (formId === undefined || formSecret === undefined) {
    throw invalidClient('Authenticate with client_id (the key id) and client_secret (the key), or HTTP Basic.');
  }
  return { grant: 'client_credentials', clientId: formId, clientSecret: formSecret, scope, viaBasic: false };
}

/** RFC 8693 §2.1: the subject token, a JWT; no actor token (no delegation) and no client credentials. */
function readExchange(
  body: Record<string, unknown>,
  param: (name: string) => string | undefined,
  authorization: string | undefined,
  scope: string | undefined,
): TokenExchangeRequest {
  if (authorization !== undefined || param('client_secret') !== undefined) {
    throw badRequest(
      'invalid_request',
      'A token exchange takes no client authentication: the subject token is the only credential.',
    );
  }
  const subjectToken = param('subject_token');
  if (subjectToken === undefined) {
    throw badRequest('invalid_request', 'subject_token is required.');
  }
  if (subjectToken.length > MAX_JWT_LENGTH) {
    throw badRequest('invalid_request', `subject_token is longer than ${MAX_JWT_LENGTH} characters.`);
  }
  const subjectTokenType = param('subject_token_type');
  if (subjectTokenType !== JWT_TOKEN_TYPE) {
    throw badRequest('invalid_request', `subject_token_type must be ${JWT_TOKEN_TYPE} (a trusted issuer's JWT).`);
  }
  const requested = param('requested_token_type');
  if (requested !== undefined && requested !== ACCESS_TOKEN_TYPE) {
    throw badRequest('invalid_request', `requested_token_type, if given, must be ${ACCESS_TOKEN_TYPE}.`);
  }
  if (param('actor_token') !== undefined || param('actor_token_type') !== undefined) {
    throw badRequest('invalid_request', 'actor_token is not supported: the issued token acts as the subject alone.');
  }
  // audience and resource may be given more than once (RFC 8693 §2.1).
  const values = (name: string): string[] => {
    const value = body[name];
    const list = Array.isArray(value) ? (value as unknown[]) : value === undefined || value === '' ? [] : [value];
    if (!list.every((item): item is string => typeof item === 'string')) {
      throw badRequest('invalid_request', `The parameter ${name} must be text.`);
    }
    return list;
  };
  return { grant: 'token_exchange', subjectToken, scope, audiences: values('audience'), resources: values('resource') };
}

/** RFC 6749 §2.3.1: Basic's id and secret are form-encoded first. */
function formUnescape(value: string): string {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    return value;
  }
}
