import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { forbidden, unauthorized } from '../common/app-error';
import { AuthService } from './auth.service';
import type { Principal } from './principal';
import { SURFACE_KEY } from './surface.decorator';
import { CREDENTIAL_LABELS, SURFACES, type SurfaceName, type SurfacePolicy } from './surfaces';

const NOT_ALLOWED_CODE = { admin: 'admin_key_not_allowed', agent: 'agent_key_not_allowed', console: 'console_session_not_allowed' } as const;

/**
 * The global guard: denies by default. A route is reachable only through the row
 * of the credential table that its `@Surface(...)` names.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly auth: AuthService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const name = this.reflector.getAllAndOverride<SurfaceName | undefined>(SURFACE_KEY, [context.getHandler(), context.getClass()]);
    if (!name) throw forbidden('route_not_declared', 'This route declares no credential policy and is closed.');
    const policy: SurfacePolicy = SURFACES[name];
    if (policy.credentials.length === 0) return true;

    const req = context.switchToHttp().getRequest<Request>();
    const principal = await this.auth.authenticate(req);
    if (!principal) {
      throw unauthorized('unauthenticated', 'Send an API key in X-API-Key or sign in to the Console.');
    }
    req.principal = principal;
    authorize(policy, principal);
    return true;
  }
}

/** Whether a principal satisfies a surface's policy; throws the 403 it deserves. */
export function authorize(policy: SurfacePolicy, principal: Principal): void {
  if (!policy.credentials.includes(principal.kind)) {
    const accepted = policy.credentials.map((kind) => CREDENTIAL_LABELS[kind]).join(', ');
    throw forbidden(NOT_ALLOWED_CODE[principal.kind], `This endpoint does not accept a ${CREDENTIAL_LABELS[principal.kind]}; it accepts: ${accepted}.`);
  }
  if (policy.claimed && principal.kind === 'agent' && !principal.identity.claimed) {
    throw forbidden('identity_unclaimed', 'The identity bound to this key is not claimed yet.');
  }
}
