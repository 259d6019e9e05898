import type { NextFunction, Request, Response } from 'express';
import type { AuthService } from './auth.service';

/** Begins each request's API key check as it arrives, before its body is read (AuthService.begin). */
export function earlyKeyCheck(auth: AuthService) {
  return (req: Request, _res: Response, next: NextFunction): void => {
    auth.begin(req);
    next();
  };
}
