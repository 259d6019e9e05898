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
  /** When it last changed, if known: sent as Last-Modified, and `If-Modified-Since` is honoured. */
  lastModified?: Date;
  /** The media type, when not `application/json`. */
  contentType?: string;
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
  const { lastModified } = representation;
  if (lastModified) {
    res.setHeader('Last-Modified', lastModified.toUTCString());
  }
  // If-None-Match decides when present (RFC 9110 §13.2.2); If-Modified-Since only without it.
  const ifNoneMatch = req.headers['if-none-match'];
  const fresh =
    ifNoneMatch !== undefined
      ? ifNoneMatchMatches(ifNoneMatch, representation.etag)
      : notModifiedSince(req.headers['if-modified-since'], lastModified);
  if (fresh) {
    res.status(304).end();
    return;
  }
  if (representation.contentType) {
    res.type(representation.contentType).send(JSON.stringify(representation.body));
    return;
  }
  res.json(representation.body);
}

/** Whether a representation last changed at `lastModified` is unchanged since the `If-Modified-Since` date (whole seconds, as HTTP dates are). */
function notModifiedSince(header: string | undefined, lastModified: Date | undefined): boolean {
  if (header === undefined || lastModified === undefined) {
    return false;
  }
  const since = Date.parse(header);
  return !Number.isNaN(since) && Math.floor(lastModified.getTime() / 1000) * 1000 <= since;
}
