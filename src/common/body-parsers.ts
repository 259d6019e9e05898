import express, { type NextFunction, type Request, type Response } from 'express';
import { AppError, badRequest } from './app-error';
import { MAX_JSON_DEPTH, requestBodyProblem, unknownBodyProblem } from './body-problem';
import { isProtocolCall, isRestBindingCall, isTokenRequest, toAppError } from './problem.filter';

const JSON_TYPES = ['application/json', 'application/*+json'];
const FORM_TYPE = 'application/x-www-form-urlencoded';
const NUL_IN_URL = /%00|\u0000/;

/** Whether a request says it carries a body (a length above zero, or chunks). */
export function hasBody(req: Pick<Request, 'headers'>): boolean {
  return Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
}

/**
 * The Content-Encodings a body may come in (docs/api.md §9). The body parser would
 * take zstd too, on a Node version that has it: the answer must not depend on that.
 */
const BODY_ENCODINGS = new Set(['identity', 'gzip', 'deflate', 'br']);

/** Whether a body's Content-Encoding (none: identity) is one the service reads, compared as the body parser compares it. */
export function acceptsEncoding(req: Pick<Request, 'headers'>): boolean {
  return BODY_ENCODINGS.has((req.headers['content-encoding'] || 'identity').toLowerCase());
}

/**
 * JSON bodies only, with a size limit per surface (docs/api.md §10): the protocol
 * endpoint takes larger messages than the REST API. A body of another media type or
 * encoding is refused with 415 rather than silently ignored.
 */
export function jsonBodyParser(limits: { rest: number; protocol: number }) {
  const rest = express.json({ limit: limits.rest, type: JSON_TYPES });
  const protocol = express.json({ limit: limits.protocol, type: JSON_TYPES });
  // The HTTP+JSON binding: the protocol's limit; top-level `null` accepted, as v0.3 clients send it for empty POSTs.
  const restBinding = express.json({ limit: limits.protocol, type: JSON_TYPES, strict: false });
  // The token endpoint takes a form, as RFC 6749 §4.4 has it (docs/api.md §17); each parameter once, as a string.
  const form = express.urlencoded({ limit: limits.rest, type: FORM_TYPE, extended: false, parameterLimit: 32 });
  return (req: Request, res: Response, next: NextFunction): void => {
    if (NUL_IN_URL.test(req.url)) {
      next(new AppError(400, 'nul_character', 'The path or query contains a NUL character.'));
      return;
    }
    if (isTokenRequest(req)) {
      if (hasBody(req) && (!req.is(FORM_TYPE) || !acceptsEncoding(req))) {
        next(new AppError(415, 'unsupported_media_type', `Send the token request as ${FORM_TYPE}.`));
        return;
      }
      form(req, res, (error?: unknown) => next(error ? toAppError(error) : undefined));
      return;
    }
    if (hasBody(req)) {
      if (!req.is(JSON_TYPES)) {
        next(new AppError(415, 'unsupported_media_type', 'Send the request body as application/json.'));
        return;
      }
      if (!acceptsEncoding(req)) {
        next(
          new AppError(
            415,
            'unsupported_media_type',
            'Send the request body with Content-Encoding gzip, deflate or br, or none.',
          ),
        );
        return;
      }
    }
    // Map parser failures here: past this point Nest rewrites them as generic 400s.
    const parser = isProtocolCall(req) ? protocol : isRestBindingCall(req) ? restBinding : rest;
    parser(req, res, (error?: unknown) => {
      if (error) {
        return next(toAppError(error));
      }
      const { found: problem, path } = requestBodyProblem(req.body);
      switch (problem) {
        case null:
          return next();
        case 'too_deep':
          return next(
            new AppError(400, 'body_too_deep', `The request body nests deeper than ${MAX_JSON_DEPTH} levels.`),
          );
        case 'nul_character':
          return next(
            new AppError(
              400,
              'nul_character',
              'The request body contains a NUL character (\\u0000), which no field accepts.',
            ),
          );
        case 'lone_surrogate': {
          const message = `${path || 'the body'} is not valid Unicode text (it holds a lone UTF-16 surrogate)`;
          return next(badRequest('validation_failed', message, [{ field: path, message }]));
        }
        case 'reserved_key': {
          const message = `${path} is not a known field`;
          return next(badRequest('validation_failed', message, [{ field: path, message }]));
        }
        default:
          return unknownBodyProblem(problem);
      }
    });
  };
}
