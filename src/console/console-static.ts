import { existsSync } from 'node:fs';
import { join } from 'node:path';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';

/**
 * The Console's Content-Security-Policy: scripts, styles and requests only from this origin,
 * no inline script or style, no framing, no plugins.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

function securityHeaders(res: Response): void {
  res.setHeader('Content-Security-Policy', CONSOLE_CSP);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('X-Frame-Options', 'DENY');
}

/**
 * `GET /` from a browser (one that asks for text/html by name) goes to the Console: a
 * person who opens the service's address lands somewhere useful. Any other client keeps
 * the 404 problem every unknown path answers.
 */
export function rootToConsole(req: Request, res: Response, next: NextFunction): void {
  const html = (req.headers.accept ?? '').split(',').some((type) => type.split(';')[0].trim() === 'text/html');
  if ((req.method === 'GET' || req.method === 'HEAD') && req.path === '/' && html) {
    return res.redirect(302, '/console/');
  }
  next();
}

/**
 * Whether a request for a Console page reached the service at another origin than
 * PUBLIC_BASE_URL's (`http://127.0.0.1:3000` when it says `http://localhost:3000`): a
 * session opened there could sign in but never change anything, as every change is
 * checked against the public origin (csrf_failed). Only a direct request is judged: behind
 * a proxy (a Forwarded or X-Forwarded-For header) the Host the service sees may be the
 * proxy's upstream name, and the proxy decides the public address.
 */
function atOtherOrigin(req: Request, publicOrigin: URL): boolean {
  if (req.headers.forwarded !== undefined || req.headers['x-forwarded-for'] !== undefined) {
    return false;
  }
  const host = req.headers.host;
  return (
    host !== undefined &&
    (host.toLowerCase() !== publicOrigin.host || req.protocol !== publicOrigin.protocol.slice(0, -1))
  );
}

/**
 * Serves the built Console under /console/ (mounted there): hashed files under assets/ are
 * immutable for a year, every other path that is not a file is a client route and gets
 * index.html, never cached so a deploy is picked up at once. A page asked for at another
 * origin than `publicBaseUrl`'s is redirected there first (the same path, on the public origin).
 */
export function consoleStaticMiddleware(root: string, publicBaseUrl: string): RequestHandler {
  const publicOrigin = new URL(publicBaseUrl);
  const index = join(root, 'index.html');
  const assets = express.static(join(root, 'assets'), {
    index: false,
    fallthrough: false,
    immutable: true,
    maxAge: '365d',
    etag: false,
    setHeaders: securityHeaders,
  });
  const files = express.static(root, {
    index: false,
    etag: true,
    setHeaders: (res) => {
      securityHeaders(res);
      res.setHeader('Cache-Control', 'no-cache');
    },
  });
  return (req: Request, res: Response, next: NextFunction) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return next();
    }
    // Mounted at /console: the bare /console needs the slash for relative asset URLs.
    if (req.originalUrl.split('?')[0] === '/console') {
      return res.redirect(301, '/console/');
    }
    if (!req.path.startsWith('/assets/') && atOtherOrigin(req, publicOrigin)) {
      return res.redirect(302, `${publicOrigin.origin}${req.originalUrl}`);
    }
    if (!existsSync(index)) {
      securityHeaders(res);
      res.status(503).type('text/plain').send('The Console is not built: run `npm run build`.\n');
      return;
    }
    if (req.path.startsWith('/assets/')) {
      req.url = req.url.slice('/assets'.length);
      return assets(req, res, (error?: unknown) => {
        if (error) {
          res.status(404).type('text/plain').send('Not found\n');
        }
      });
    }
    files(req, res, () => {
      securityHeaders(res);
      res.setHeader('Cache-Control', 'no-cache');
      res.sendFile(index);
    });
  };
}
