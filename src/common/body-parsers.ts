import express, { type NextFunction, type Request, type Response } from 'express';
import { AppError } from './app-error';
import { isProtocolCall, toAppError } from './problem.filter';

const JSON_TYPES = ['application/json', 'application/*+json'];
/** Deeper bodies are refused: recursive validation and mapping would overflow the stack. */
export const MAX_JSON_DEPTH = 64;

/** Nesting depth of a parsed JSON value, walked iteratively (a recursive walk could overflow too). */
export function exceedsDepth(value: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth > limit) return true;
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return false;
}

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
    (isProtocolCall(req) ? protocol : rest)(req, res, (error?: unknown) => {
      if (error) return next(toAppError(error));
      if (exceedsDepth(req.body, MAX_JSON_DEPTH)) {
        return next(new AppError(400, 'body_too_deep', `The request body nests deeper than ${MAX_JSON_DEPTH} levels.`));
      }
      next();
    });
  };
}
