import { AsyncLocalStorage } from 'node:async_hooks';
import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import type { Request } from 'express';
import { Observable } from 'rxjs';

/**
 * The request a change is made in, for the audit log's request id, client address
 * and (when the caller passes none) actor. Read from an AsyncLocalStorage rather
 * than threaded through every service signature: changes are recorded deep in
 * call chains shared by several routes (an identity's deletion revokes its keys,
 * signup mints one), and passing the request down each of them would touch every
 * service's parameters for data that is the same for the whole request. The
 * interceptor sets it after body parsing and authentication, around the handler.
 */
const current = new AsyncLocalStorage<Request>();

export function currentRequest(): Request | undefined {
  return current.getStore();
}

@Injectable()
export class AuditContextInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    const req = context.switchToHttp().getRequest<Request>();
    return new Observable((subscriber) => current.run(req, () => next.handle().subscribe(subscriber)));
  }
}
