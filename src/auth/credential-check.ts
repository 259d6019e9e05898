import { Injectable } from '@nestjs/common';
import { forbidden, unauthorized } from '../common/app-error';
import { RateLimitService, type HeaderSink } from '../limits/rate-limit.service';
import { AuthService, type CredentialSource } from './auth.service';
import type { Principal } from '../common/principal';
import { CREDENTIAL_LABELS, SURFACES, type SurfaceName, type SurfacePolicy } from './surfaces';

const NOT_ALLOWED_CODE = {
  admin: 'admin_key_not_allowed',
  agent: 'agent_key_not_allowed',
  console: 'console_session_not_allowed',
} as const;

/**
 * Check 1 of a surface that takes a credential, in one place for every transport
 * (the HTTP guard, the gRPC binding): who is calling (401), their quota (429),
 * whether the surface takes them (403). A failed authentication spends the client
 * address's public quota (a 429 replaces the 401 past it).
 */
@Injectable()
export class CredentialCheck {
  constructor(
    private readonly auth: AuthService,
    private readonly limits: RateLimitService,
  ) {}

  /**
   * `identified` learns the principal as soon as it is known, even when a later check
   * refuses it (for the request log). `address` is the client address's quota subject,
   * or a function that works it out (only a failed authentication needs it).
   */
  async admit(
    name: SurfaceName,
    source: CredentialSource,
    address: string | (() => string),
    headers: HeaderSink,
    identified?: (principal: Principal) => void,
  ): Promise<Principal> {
    let principal: Principal;
    try {
      const authenticated = await this.auth.authenticate(source);
      if (!authenticated) {
        throw unauthorized('unauthenticated', 'Send an API key in X-API-Key or sign in to the Console.');
      }
      principal = authenticated;
      identified?.(principal);
    } catch (error) {
      await this.limits.enforce(headers, 'public', typeof address === 'string' ? address : address());
      throw error;
    }
    await this.limits.enforce(headers, name === 'protocol' ? 'protocol' : 'rest', `${principal.kind}:${principal.id}`);
    authorize(SURFACES[name], principal);
    return principal;
  }
}

/** Whether a principal satisfies a surface's policy; throws the 403 it deserves. */
export function authorize(policy: SurfacePolicy, principal: Principal): void {
  if (!policy.credentials.includes(principal.kind)) {
    const accepted = policy.credentials.map((kind) => CREDENTIAL_LABELS[kind]).join(', ');
    throw forbidden(
      NOT_ALLOWED_CODE[principal.kind],
      `This endpoint does not accept a ${CREDENTIAL_LABELS[principal.kind]}; it accepts: ${accepted}.`,
    );
  }
  if (policy.claimed && principal.kind === 'agent' && !principal.identity.claimed) {
    throw forbidden('identity_unclaimed', 'The identity bound to this key is not claimed yet.');
  }
}
