import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { forbidden, unauthorized } from '../common/app-error';
import { addressSubject } from '../limits/client-address';
import { EXTRA_QUOTA_KEY } from '../limits/rate-limit.decorator';
import { RateLimitService, type QuotaName } from '../limits/rate-limit.service';
import { AuthService } from './auth.service';
import type { Principal } from './principal';
import { SURFACE_KEY } from './surface.decorator';
import { CREDENTIAL_LABELS, SURFACES, type SurfaceName, type SurfacePolicy } from './surfaces';

const NOT_ALLOWED_CODE = { admin: 'admin_key_not_allowed', agent: 'agent_key_not_allowed', console: 'console_session_not_allowed' } as const;

/**
 * The global guard: denies by default. A route is reachable only through the row
 * of the credential table that its `@Surface(...)` names. It also spends the
 * caller's quota: per client address on public routes (and for failed
 * authentication), per API key id or Console user elsewhere.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly auth: AuthService,
    private readonly limits: RateLimitService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    const name = this.reflector.getAllAndOverride<SurfaceName | undefined>(SURFACE_KEY, targets);
    if (!name) throw forbidden('route_not_declared', 'This route declares no credential policy and is closed.');
    const policy: SurfacePolicy = SURFACES[name];
    const http = context.switchToHttp();
    const req = http.getRequest<Request>();
    const res = http.getResponse<Response>();
    const address = addressSubject(req.ip);

    const extra = this.reflector.getAllAndOverride<QuotaName | undefined>(EXTRA_QUOTA_KEY, targets);
    if (extra) await this.limits.enforce(res, extra, address);
    if (policy.credentials.length === 0) {
      await this.limits.enforce(res, 'public', address);
      return true;
    }

    let principal: Principal;
    try {
      const authenticated = await this.auth.authenticate(req);
      if (!authenticated) throw unauthorized('unauthenticated', 'Send an API key in X-API-Key or sign in to the Console.');
      principal = authenticated;
    } catch (error) {
      // A failed authentication spends the address's public quota (a 429 replaces the 401 past it).
      await this.limits.enforce(res, 'public', address);
      throw error;
    }
    req.principal = principal;
    await this.limits.enforce(res, name === 'protocol' ? 'protocol' : 'rest', `${principal.kind}:${principal.id}`);
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
