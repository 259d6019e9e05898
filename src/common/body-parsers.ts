import express, { type NextFunction, type Request, type Response } from 'express';
import { AppError } from './app-error';
import { isProtocolCall, toAppError } from './problem.filter';

const JSON_TYPES = ['application/json', 'application/*+json'];

/**
 * JSON bodies only, with a size limit per surface (CONTRACT §10): the protocol
 * endpoint takes larger messages than the REST API. A body of another media type
 * is refused with 415 rather than silently ignored.
 */
export function jsonBodyParser(limits: { rest: number; protocol: number }) {
  const rest = express.json({ limit: limits.rest, type: JSON_TYPES });
  const protocol = express.json({ limit: limits.protocol, type: JSON_TYPES });
  return (req: Request, res: Response, next: NextFunction): void => {
    const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
    if (hasBody && !req.is(JSON_TYPES)) {
      next(new AppError(415, 'unsupported_media_type', 'Send the request body as application/json.'));
      return;
    }
    // Map parser failures here: past this point Nest rewrites them as generic 400s.
    (isProtocolCall(req) ? protocol : rest)(req, res, (error?: unknown) => next(error ? toAppError(error) : undefined));
  };
}
