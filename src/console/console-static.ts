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
 * Serves the built Console under /console/ (mounted there): hashed files under assets/ are
 * immutable for a year, every other path that is not a file is a client route and gets
 * index.html, never cached so a deploy is picked up at once.
 */
export function consoleStaticMiddleware(root: string): RequestHandler {
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
