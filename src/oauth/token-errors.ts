import { AppError } from '../common/app-error';
import type { JwtRefusal } from '../common/jwt';

/** Why a bearer token is refused (docs/api.md §17): the JWT's own reasons, and those of what it stands for. */
export type TokenRefusal =
  JwtRefusal | 'key_revoked' | 'untrusted_issuer' | 'unmapped_subject' | 'identity_unavailable';

/**
 * The 401 of a refused bearer token: `invalid_token`, the reason first in the detail,
 * and RFC 6750's `WWW-Authenticate` challenge. Never the token itself.
 */
export function invalidToken(reason: TokenRefusal, detail: string): AppError {
  const description = `${reason}: ${detail}`;
  return new AppError(401, 'invalid_token', description, {
    headers: {
      'WWW-Authenticate': `Bearer error="invalid_token", error_description="${description.replace(/["\\]/g, "'")}"`,
    },
  });
}
