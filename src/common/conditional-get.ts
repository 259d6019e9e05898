import type { Request, Response } from 'express';

/**
 * Whether an `If-None-Match` header matches `etag` (RFC 9110 §13.1.2): `*`, or any
 * listed entity tag under the weak comparison (the `W/` prefix ignored).
 */
export function ifNoneMatchMatches(header: string | undefined, etag: string): boolean {
  if (header === undefined) {
    return false;
  }
  if (header.trim() === '*') {
    return true;
  }
  const wanted = opaque(etag);
  return [...header.matchAll(/(?:W\/)?"([^"]*)"/g)].some((match) => match[1] === wanted);
}

const opaque = (etag: string) => etag.replace(/^W\//, '').replace(/^"|"$/g, '');

/** A representation and its entity tag. */
export interface Tagged<T> {
  body: T;
  etag: string;
}

/**
 * Sends the representation as JSON with its validators, or a bodiless 304 when the
 * client's copy is current. The origin answers 304 even when the request says
 * `Cache-Control: no-cache` (which fetch() adds to every conditional request): that
 * directive binds caches, not the origin — unlike Express's req.fresh.
 */
export function sendCacheable(
  req: Request,
  res: Response,
  representation: Tagged<unknown>,
  cacheControl: string,
): void {
  res.setHeader('ETag', representation.etag);
  res.setHeader('Cache-Control', cacheControl);
  if (ifNoneMatchMatches(req.headers['if-none-match'], representation.etag)) {
    res.status(304).end();
    return;
  }
  res.json(representation.body);
}
