import express, { type NextFunction, type Request, type Response } from 'express';
import { AppError, badRequest } from './app-error';
import { isProtocolCall, isRestBindingCall, toAppError } from './problem.filter';

const JSON_TYPES = ['application/json', 'application/*+json'];
/** Deeper bodies are refused: recursive validation and mapping would overflow the stack. */
export const MAX_JSON_DEPTH = 64;

/** `String.prototype.isWellFormed` (Node 20 has it; the ES2022 lib the compiler targets does not declare it). */
const isWellFormed = (String.prototype as unknown as { isWellFormed(this: string): boolean }).isWellFormed;

type BodyProblem = 'too_deep' | 'nul_character' | 'lone_surrogate';

/** A string's problem, if any: a NUL character, or a lone surrogate (a UTF-16 surrogate without its pair). */
const textProblem = (text: string): BodyProblem | null =>
  text.includes('\u0000') ? 'nul_character' : isWellFormed.call(text) ? null : 'lone_surrogate';

/**
 * What makes a parsed body unacceptable before any handler sees it: nesting deeper
 * than `limit` (recursive validation would overflow the stack), a NUL character
 * (PostgreSQL text cannot hold one) or a lone UTF-16 surrogate (JSON's `\ud800`
 * escape: not text; validators throw on it, and PostgreSQL would get U+FFFD in its
 * place). Walked iteratively, so the walk cannot overflow. Every binding's check:
 * the HTTP bindings' parsed JSON, gRPC's decoded message.
 */
export function bodyProblem(value: unknown, limit: number): BodyProblem | null {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (typeof node === 'string') {
      const problem = textProblem(node);
      if (problem) return problem;
      continue;
    }
    // Bytes (a decoded protobuf message's) are data, not nesting.
    if (node === null || typeof node !== 'object' || ArrayBuffer.isView(node)) continue;
    if (depth > limit) return 'too_deep';
    for (const [key, child] of Object.entries(node)) {
      const problem = textProblem(key);
      if (problem) return problem;
      stack.push([child, depth + 1]);
    }
  }
  return null;
}

/**
 * The path (`email`, `message.parts[0].text`) of the first string that holds a lone
 * surrogate, or of the object whose key holds one; null if none does. Walked only
 * once `bodyProblem` found one, to name the field.
 */
export function loneSurrogatePath(value: unknown): string | null {
  const stack: Array<[unknown, string]> = [[value, '']];
  while (stack.length > 0) {
    const [node, path] = stack.pop()!;
    if (typeof node === 'string') {
      if (!isWellFormed.call(node)) return path;
      continue;
    }
    if (node === null || typeof node !== 'object') continue;
    const array = Array.isArray(node);
    for (const [key, child] of Object.entries(node)) {
      // A key that is not text is named by its parent.
      if (!isWellFormed.call(key)) return path;
      stack.push([child, array ? `${path}[${key}]` : path ? `${path}.${key}` : key]);
    }
  }
  return null;
}

/** Keys that name JavaScript's object machinery, not data: Nest strips them silently wherever they are. */
const RESERVED_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * The path (`peer.__proto__`, `message.parts[0].data.constructor`) of the first
 * `__proto__`, `constructor` or `prototype` key in a parsed body, or null. No field of
 * this API has such a name, and letting one through would either lose it silently (the
 * validation pipe deletes them) or hand a prototype-pollution vector to whatever merges
 * the object later, so they are refused as unknown fields wherever they occur.
 */
export function reservedKeyPath(value: unknown): string | null {
  const stack: Array<[unknown, string]> = [[value, '']];
  while (stack.length > 0) {
    const [node, path] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    const array = Array.isArray(node);
    for (const [key, child] of Object.entries(node)) {
      const childPath = array ? `${path}[${key}]` : path ? `${path}.${key}` : key;
      if (!array && RESERVED_KEYS.has(key)) return childPath;
      stack.push([child, childPath]);
    }
  }
  return null;
}

const NUL_IN_URL = /%00|\u0000/;

/** Whether a request says it carries a body (a length above zero, or chunks). */
export function hasBody(req: Pick<Request, 'headers'>): boolean {
  return Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
}

/**
 * The 400 for a compressed body that does not decompress (corrupt, truncated, not
 * what its Content-Encoding names), or null for another error. The body parser
 * passes on zlib's error as it is, with no `type` of its own; an unknown encoding is
 * its own 415 (`encoding.unsupported`), mapped by toAppError.
 */
export function decodingError(req: Pick<Request, 'headers'>, error: unknown): AppError | null {
  const encoding = req.headers['content-encoding']?.trim().toLowerCase();
  if (!encoding || encoding === 'identity') return null;
  if (typeof error !== 'object' || error === null || typeof (error as { type?: unknown }).type === 'string')
    return null;
  return new AppError(
    400,
    'invalid_content_encoding',
    `The request body is not valid ${encoding} data, as its Content-Encoding says it is.`,
  );
}

/**
 * JSON bodies only, with a size limit per surface (docs/api.md §10): the protocol
 * endpoint takes larger messages than the REST API. A body of another media type
 * is refused with 415 rather than silently ignored.
 */
export function jsonBodyParser(limits: { rest: number; protocol: number }) {
  const rest = express.json({ limit: limits.rest, type: JSON_TYPES });
  const protocol = express.json({ limit: limits.protocol, type: JSON_TYPES });
  // The HTTP+JSON binding: the protocol's limit; top-level `null` accepted, as v0.3 clients send it for empty POSTs.
  const restBinding = express.json({ limit: limits.protocol, type: JSON_TYPES, strict: false });
  return (req: Request, res: Response, next: NextFunction): void => {
    if (NUL_IN_URL.test(req.url)) {
      next(new AppError(400, 'nul_character', 'The path or query contains a NUL character.'));
      return;
    }
    if (hasBody(req) && !req.is(JSON_TYPES)) {
      next(new AppError(415, 'unsupported_media_type', 'Send the request body as application/json.'));
      return;
    }
    // Map parser failures here: past this point Nest rewrites them as generic 400s.
    const parser = isProtocolCall(req) ? protocol : isRestBindingCall(req) ? restBinding : rest;
    parser(req, res, (error?: unknown) => {
      if (error) return next(decodingError(req, error) ?? toAppError(error));
      switch (bodyProblem(req.body, MAX_JSON_DEPTH)) {
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
          const field = loneSurrogatePath(req.body) ?? '';
          const message = `${field || 'the body'} is not valid Unicode text (it holds a lone UTF-16 surrogate)`;
          return next(badRequest('validation_failed', message, [{ field, message }]));
        }
        default: {
          const reserved = reservedKeyPath(req.body);
          if (reserved === null) return next();
          const message = `${reserved} is not a known field`;
          next(badRequest('validation_failed', message, [{ field: reserved, message }]));
        }
      }
    });
  };
}
