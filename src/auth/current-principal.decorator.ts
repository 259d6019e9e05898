import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import type { Principal } from '../common/principal';

/** Hands a handler the authenticated principal that the guard attached. */
export const CurrentPrincipal = createParamDecorator((_: unknown, ctx: ExecutionContext): Principal => {
  const principal = ctx.switchToHttp().getRequest<Request>().principal;
  if (!principal) {
    throw new Error('CurrentPrincipal used on a route without a credential');
  }
  return principal;
});
