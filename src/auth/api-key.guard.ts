import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { forbidden } from '../common/app-error';
import { addressSubject } from '../limits/client-address';
import { EXTRA_QUOTA_KEY } from '../limits/rate-limit.decorator';
import { RateLimitService, type QuotaName } from '../limits/rate-limit.service';
import { CredentialCheck } from './credential-check';
import { SURFACE_KEY } from './surface.decorator';
import { SURFACES, type SurfaceName, type SurfacePolicy } from './surfaces';

export { authorize } from './credential-check';

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
    private readonly credentials: CredentialCheck,
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
    await this.credentials.admit(name, req, address, res, (principal) => (req.principal = principal));
    return true;
  }
}
