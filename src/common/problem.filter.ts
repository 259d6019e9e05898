import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Inject } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { Logger } from 'pino';
import { ERROR_INFO_TYPE } from '@a2a-js/sdk/errors';
import { rpcStatusFor, SERVICE_ERROR_DOMAIN } from './binding-status';
import { AppError } from './app-error';
import { spokenVersion } from './a2a-version';
import type { ErrorCode } from './error-codes';
import { LOGGER } from './tokens';

/** Stable codes for errors that do not start as an AppError. */
const CODE_BY_STATUS: Record<number, ErrorCode> = {
  400: 'bad_request',
  401: 'unauthenticated',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
};

/**
 * What Express's body parser passes on: its own errors carry a status and a `type`;
 * zlib's error for a compressed body that does not decompress (corrupt, truncated, not
 * what its Content-Encoding names) comes as zlib raised it (a numeric `errno` and a
 * `code`, no `syscall` as a socket's error has), given a status but no `type`.
 */
interface BodyParserError {
  type?: unknown;
  status?: unknown;
  statusCode?: unknown;
  errno?: unknown;
  code?: unknown;
  syscall?: unknown;
}

/** The AppError for an error of Express's body parser, or null for any other error. */
function bodyParserError(error: unknown): AppError | null {
  if (typeof error !== 'object' || error === null) {
    return null;
  }
  const { type, errno, code, syscall, status = (error as BodyParserError).statusCode } = error as BodyParserError;
  if (typeof status !== 'number') {
    return null;
  }
  if (type === undefined && typeof errno === 'number' && typeof code === 'string' && syscall === undefined) {
    return new AppError(
      400,
      'invalid_content_encoding',
      'The request body does not decompress as its Content-Encoding says.',
    );
  }
  if (typeof type !== 'string') {
    return null;
  }
  switch (type) {
    case 'entity.parse.failed':
      return new AppError(400, 'malformed_json', 'The request body is not valid JSON.');
    case 'entity.too.large':
      return new AppError(413, 'payload_too_large', 'The request body is larger than this endpoint accepts.');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new AppError(415, 'unsupported_media_type', 'The request body encoding is not supported.');
    default:
      return status >= 400 && status < 500
        ? AppError.withStatus(status, CODE_BY_STATUS[status] ?? 'bad_request', 'The request body could not be read.')
        : null;
  }
}

/**
 * PostgreSQL "data exception" codes that only client input can cause here (a value
 * the column type refuses: bad text for a uuid or timestamp, out of range, NUL, too
 * long). Validation should refuse such input first; this is the backstop that keeps
 * a missed case a 400 instead of a 500.
 */
const CLIENT_DATA_ERRORS = new Set([
  '22P02',
  '22007',
  '22008',
  '22003',
  '22021',
  '22P05',
  '22001',
  '22023',
  '2201B',
  '2202E',
]);

/** A 400 for a database error caused by a value from the request, or null. */
export function clientDataError(error: unknown): AppError | null {
  const code = (error as { driverError?: { code?: unknown } } | null)?.driverError?.code;
  return typeof code === 'string' && CLIENT_DATA_ERRORS.has(code)
    ? new AppError(
        400,
        'invalid_value',
        'A value in the request is not acceptable (wrong format, out of range, or too long).',
      )
    : null;
}

/** Turns anything thrown into an AppError; unknown errors become an opaque 500. */
export function toAppError(error: unknown): AppError {
  if (error instanceof AppError) {
    return error;
  }
  const dataError = clientDataError(error);
  if (dataError) {
    return dataError;
  }
  const parserError = bodyParserError(error);
  if (parserError) {
    return parserError;
  }
  if (error instanceof HttpException) {
    const status = error.getStatus();
    const body = error.getResponse();
    const message =
      typeof body === 'object' && body && 'message' in body ? (body as { message: unknown }).message : error.message;
    const detail = status === 404 ? 'No such route.' : Array.isArray(message) ? message.join('; ') : String(message);
    return AppError.withStatus(
      status,
      CODE_BY_STATUS[status] ?? (status >= 500 ? 'internal_error' : 'bad_request'),
      detail,
    );
  }
  return new AppError(500, 'internal_error', 'An unexpected error occurred.');
}

/**
 * Renders every error. REST routes get RFC 9457 problem+json; a protocol call
 * (`POST /a2a/{handle}`) gets a JSON-RPC error body, since its clients speak JSON-RPC.
 */
@Catch()
export class ProblemFilter implements ExceptionFilter {
  constructor(@Inject(LOGGER) private readonly logger: Logger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const ctx = host.switchToHttp();
    const req = ctx.getRequest<Request>();
    const res = ctx.getResponse<Response>();
    const error = toAppError(exception);
    if (error.status >= 500) {
      this.logger.error({ request_id: req.id, err: exception }, 'unhandled error');
    }
    if (res.headersSent) {
      res.end();
      return;
    }
    for (const [name, value] of Object.entries(error.extra.headers ?? {})) {
      res.setHeader(name, value);
    }
    if (isProtocolCall(req)) {
      res.status(error.status).type('application/json').send(jsonRpcErrorBody(req, error));
      return;
    }
    if (isRestBindingCall(req)) {
      sendRestBindingError(req, res, error);
      return;
    }
    if (isTokenRequest(req)) {
      res.status(error.status).setHeader('Cache-Control', 'no-store').json(oauthErrorBody(error));
      return;
    }
    res.status(error.status).type('application/problem+json').send(problemBody(req, error));
  }
}

export function problemBody(req: Request, error: AppError) {
  return {
    type: 'about:blank',
    title: error.title,
    status: error.status,
    detail: error.detail,
    code: error.code,
    request_id: req.id,
    ...error.extra.data,
    ...(error.extra.errors ? { errors: error.extra.errors } : {}),
  };
}

/** `POST /oauth/token` (docs/api.md §17), whose errors take RFC 6749's form. */
export function isTokenRequest(req: Request): boolean {
  return req.method === 'POST' && /^\/oauth\/token\/?$/.test(req.path);
}

const OAUTH_ERRORS = new Set<ErrorCode>([
  'invalid_request',
  'invalid_client',
  'unsupported_grant_type',
  'invalid_scope',
  'invalid_grant',
  'invalid_target',
]);

/**
 * An error of the token endpoint as RFC 6749 §5.2 has it, `{error, error_description}`:
 * its own codes as they are; any other refusal of the request (a body that does not
 * parse, one too large) as `invalid_request`, a rate limit as `slow_down`... none of
 * RFC 6749's, so `invalid_request` too; a failure of the service as `server_error`.
 */
export function oauthErrorBody(error: AppError): { error: string; error_description: string } {
  const code = OAUTH_ERRORS.has(error.code)
    ? error.code
    : error.status >= 500
      ? 'server_error'
      : error.status === 401
        ? 'invalid_client'
        : 'invalid_request';
  return { error: code, error_description: error.detail };
}

export function isProtocolCall(req: Request): boolean {
  return req.method === 'POST' && /^\/a2a\/[^/]+\/?$/.test(req.path);
}

/** A call of the HTTP+JSON binding, `{base}/a2a/{handle}/rest/…` (docs/api.md §5). */
export function isRestBindingCall(req: Request): boolean {
  return /^\/a2a\/[^/]+\/rest(\/|$)/.test(req.path);
}

/**
 * A protocol check's error (docs/api.md §5) on the HTTP+JSON binding, in that binding's
 * form for the generation asked for. A2A 1.0 (`A2A-Version: 1.0`): RFC 9457
 * problem+json whose `error` member is the `google.rpc.Status` that the v1.0
 * binding and its clients read (`ErrorInfo.reason` is the check's reason). v0.3 (no
 * header or `0.3`): the v0.3 REST error object `{code, message, data}`, as on the
 * JSON-RPC endpoint.
 */
export function sendRestBindingError(req: Request, res: Response, error: AppError): void {
  if (restBindingVersion(req) === '0.3') {
    res.status(error.status).type('application/json').send(jsonRpcErrorBody(req, error).error);
    return;
  }
  res.status(error.status).type('application/problem+json').send(restBindingErrorBody(req, error));
}

/** The v1.0 body of `sendRestBindingError` (also an SSE error event's data). */
export function restBindingErrorBody(req: Request, error: AppError) {
  return {
    ...problemBody(req, error),
    code: checkReason(error),
    error: {
      code: error.status,
      status: rpcStatusFor(error.status),
      message: error.detail,
      details: [{ '@type': ERROR_INFO_TYPE, ...checkErrorInfo(error, String(req.id)) }],
    },
  };
}

/**
 * A protocol check's error as the `google.rpc.ErrorInfo` that the HTTP+JSON (v1.0) and
 * gRPC bindings carry: the reason in upper case, in this service's domain, and as it is
 * (with the request id) in its metadata.
 */
export function checkErrorInfo(error: AppError, requestId: string) {
  const reason = checkReason(error);
  return {
    reason: reason.toUpperCase(),
    domain: SERVICE_ERROR_DOMAIN,
    metadata: { reason, request_id: requestId, ...error.extra.data },
  };
}

/**
 * The generation of an HTTP+JSON binding call, as the SDK's restHandler routes it:
 * v0.3 for a `/v1/…` route unless `A2A-Version: 1.0` (no header means 0.3, docs/api.md
 * §5), v1.0 for the others; null for a version this service does not speak.
 */
export function restBindingVersion(req: Request): '1.0' | '0.3' | null {
  const header = req.header('a2a-version');
  const version = header === undefined ? undefined : spokenVersion(header);
  if (version === null) {
    return null;
  }
  return version !== '1.0' && /^\/a2a\/[^/]+\/rest\/v1\//.test(req.path) ? '0.3' : '1.0';
}

/** JSON-RPC code for HTTP-level failures of a protocol call, by HTTP status. */
function jsonRpcCode(error: AppError): number {
  if (error.code === 'malformed_json') {
    return -32700;
  }
  if (error.status === 400 || error.status === 413 || error.status === 415) {
    return -32600;
  }
  if (error.status >= 500) {
    return -32603;
  }
  return -32000;
}

/**
 * docs/api.md §5 names the reasons of the protocol's HTTP errors; every 401 there is
 * `unauthenticated` (missing, malformed, unknown or revoked key alike), except an
 * expired key's, `api_key_expired`: the caller can do something about it (mint a new key).
 */
export function checkReason(error: AppError): string {
  return error.status === 401 && error.code !== 'api_key_expired' ? 'unauthenticated' : error.code;
}

/** The JSON-RPC error body of a protocol call's HTTP-level failure (also an SSE error event's). */
export function jsonRpcErrorBody(req: Request, error: AppError) {
  const body = req.body as { id?: unknown } | undefined;
  const id =
    body && typeof body === 'object' && (typeof body.id === 'string' || typeof body.id === 'number') ? body.id : null;
  return {
    jsonrpc: '2.0',
    id,
    error: {
      code: jsonRpcCode(error),
      message: error.detail,
      data: { reason: checkReason(error), status: error.status, request_id: req.id, ...error.extra.data },
    },
  };
}
