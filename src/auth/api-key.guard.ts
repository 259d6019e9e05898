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

/** What the guard reads from a route's decorators: its surface and its extra quota. */
interface RouteRule {
  name: SurfaceName;
  policy: SurfacePolicy;
  extra: QuotaName | undefined;
}

/**
 * The global guard: denies by default. A route is reachable only through the row
 * of the credential table that its `@Surface(...)` names. It also spends the
 * caller's quota: per client address on public routes (and for failed
 * authentication), per API key id or Console user elsewhere.
 *
 * Every request runs it, so it does no more than the request needs: a route's
 * decorators are read once (metadata does not change after start), the client
 * address is worked out only when a quota is counted against it, and a public route
 * is decided synchronously when the quota counts in memory.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  /** Per controller class, per handler: the route's rule, or null when it declares no surface. */
  private readonly rules = new WeakMap<object, WeakMap<object, RouteRule | null>>();

  constructor(
    private readonly reflector: Reflector,
    private readonly credentials: CredentialCheck,
    private readonly limits: RateLimitService,
  ) {}

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const rule = this.ruleOf(context);
    if (!rule) {
      throw forbidden('route_not_declared', 'This route declares no credential policy and is closed.');
    }
    const http = context.switchToHttp();
    const req = http.getRequest<Request>();
    const res = http.getResponse<Response>();
    if (rule.extra) {
      const spent = this.limits.enforce(res, rule.extra, addressSubject(req.ip));
      if (spent) {
        return spent.then(() => this.admit(rule, req, res));
      }
    }
    return this.admit(rule, req, res);
  }

  private admit(rule: RouteRule, req: Request, res: Response): boolean | Promise<boolean> {
    if (rule.policy.credentials.length === 0) {
      const spent = this.limits.enforce(res, 'public', addressSubject(req.ip));
      return spent ? spent.then(() => true) : true;
    }
    return this.credentials
      .admit(
        rule.name,
        req,
        () => addressSubject(req.ip),
        res,
        (principal) => (req.principal = principal),
      )
      .then(() => true);
  }

  private ruleOf(context: ExecutionContext): RouteRule | null {
    const controller = context.getClass();
    const handler = context.getHandler();
    let rules = this.rules.get(controller);
    if (!rules) {
      this.rules.set(controller, (rules = new WeakMap()));
    }
    let rule = rules.get(handler);
    if (rule === undefined) {
      const targets = [handler, controller];
      const name = this.reflector.getAllAndOverride<SurfaceName | undefined>(SURFACE_KEY, targets);
      const extra = this.reflector.getAllAndOverride<QuotaName | undefined>(EXTRA_QUOTA_KEY, targets);
      rule = name ? { name, policy: SURFACES[name], extra } : null;
      rules.set(handler, rule);
    }
    return rule;
  }
}
