import type { NextFunction, Request, Response } from 'express';
import { hasBody } from '../common/body-parsers';
import type { AuthService } from './auth.service';

/**
 * Begins the API key's read of each request with a body as it arrives, before the body
 * is read (AuthService.begin). Requests without one (a card, the directory: routes that
 * may take no key) have nothing to overlap and are left to the guard.
 */
export function earlyKeyCheck(auth: AuthService) {
  return (req: Request, _res: Response, next: NextFunction): void => {
    if (hasBody(req)) {
      auth.begin(req);
    }
    next();
  };
}
