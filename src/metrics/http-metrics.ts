import type { NextFunction, Request, Response } from 'express';
import { Metrics, UNMATCHED_ROUTE } from './metrics';

/**
 * Counts every HTTP request once its response is finished (or the client went away),
 * with the route's template (`/api/v1/identities/:handle`) — the matched Express
 * route, never the path — so labels stay bounded; the Console's files are one label,
 * and anything that matched no route is `unmatched`.
 */
export function httpMetricsMiddleware(metrics: Metrics) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!metrics.enabled) return next();
    const started = process.hrtime.bigint();
    let counted = false;
    const count = () => {
      if (counted) return;
      counted = true;
      metrics.http(req.method, routeOf(req), res.statusCode, Number(process.hrtime.bigint() - started) / 1e9);
    };
    res.once('finish', count);
    res.once('close', count);
    next();
  };
}

function routeOf(req: Request): string {
  const route = (req as Request & { route?: { path?: unknown } }).route;
  if (route && typeof route.path === 'string') return `${req.baseUrl}${route.path}`;
  if (req.originalUrl === '/console' || req.originalUrl.startsWith('/console/')) return '/console/*';
  return UNMATCHED_ROUTE;
}
