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
    if (!metrics.enabled) {
      return next();
    }
    const started = process.hrtime.bigint();
    let counted = false;
    const count = () => {
      if (counted) {
        return;
      }
      counted = true;
      metrics.http(req.method, routeOf(req), res.statusCode, Number(process.hrtime.bigint() - started) / 1e9);
    };
    res.once('finish', count);
    res.once('close', count);
    next();
  };
}

/** Where `keepRouteLabel` leaves the label of a request handed on to another router. */
const KEPT_ROUTE = Symbol('metrics route label');
type Labelled = Request & { route?: { path?: unknown }; [KEPT_ROUTE]?: string };

/**
 * Fixes the request's route label at the service's route, before the handler hands the
 * request on to another Express router (the SDK's, for the HTTP+JSON binding): that
 * router sets `req.route` to its own route, relative to the path it was given
 * (`/tasks/:taskId`), which would label the request as a route the service does not have.
 */
export function keepRouteLabel(req: Request): void {
  (req as Labelled)[KEPT_ROUTE] = routeOf(req);
}

function routeOf(req: Request): string {
  const kept = (req as Labelled)[KEPT_ROUTE];
  if (kept !== undefined) {
    return kept;
  }
  const route = (req as Labelled).route;
  // `tasks/:taskId\:cancel` escapes a literal colon for the router; the label is the route as documented.
  if (route && typeof route.path === 'string') {
    return `${req.baseUrl}${route.path}`.replace(/\\(.)/g, '$1');
  }
  if (req.originalUrl === '/console' || req.originalUrl.startsWith('/console/')) {
    return '/console/*';
  }
  return UNMATCHED_ROUTE;
}
