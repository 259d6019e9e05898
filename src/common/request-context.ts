import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Principal } from './principal';

declare module 'express-serve-static-core' {
  interface Request {
    id: string;
    principal?: Principal;
    startedAt: bigint;
  }
}

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/;

/** Gives every request an id (a caller's safe `X-Request-Id` is kept) and echoes it. */
export function requestIdMiddleware(req: Request, res: Response, next: NextFunction): void {
  const inbound = req.header('x-request-id');
  req.id = inbound && SAFE_REQUEST_ID.test(inbound) ? inbound : randomUUID();
  req.startedAt = process.hrtime.bigint();
  res.setHeader('X-Request-Id', req.id);
  next();
}
