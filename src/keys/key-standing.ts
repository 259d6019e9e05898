import { badRequest, unauthorized, type AppError } from '../common/app-error';
import type { KeyStanding } from './keys.repository';

const DAY_MS = 86_400_000;

/** The 401 an expired key gets (docs/api.md §2): its own code, so the caller knows to mint a new key. */
export function expiredKey(expiresAt: Date | null): AppError {
  const when = expiresAt ? ` at ${expiresAt.toISOString()}` : '';
  return unauthorized('api_key_expired', `The API key expired${when}; use another key, or mint a new one.`);
}

/**
 * The 401 an open call or stream ends with once its key no longer stands (the same
 * codes a new request would get); null while the key is active.
 */
export function lostKey(standing: KeyStanding): AppError | null {
  switch (standing) {
    case 'active':
      return null;
    case 'expired':
      return unauthorized('api_key_expired', 'The API key expired while this call was open.');
    case 'revoked':
      return unauthorized('invalid_api_key', 'The API key was revoked while this call was open.');
  }
}

/**
 * A new key's lifetime (docs/api.md §2): `requested` must be in the future and, under
 * the organization's `maxDays`, within that many days of now. What to store: the
 * requested time, or — none requested — `defaultDays` for the database to add to the
 * key's `created_at` (null: the key never expires).
 */
export function keyLifetime(
  requested: Date | undefined,
  maxDays: number | null,
  now = Date.now(),
): { expiresAt: Date | null; defaultDays: number | null } {
  if (requested === undefined) {
    return { expiresAt: null, defaultDays: maxDays };
  }
  if (requested.getTime() <= now) {
    throw badRequest('validation_failed', 'expires_at must be in the future.', [
      { field: 'expires_at', message: 'expires_at must be in the future' },
    ]);
  }
  if (maxDays !== null && requested.getTime() > now + maxDays * DAY_MS) {
    throw badRequest('validation_failed', `Your organization's keys live at most ${maxDays} days.`, [
      {
        field: 'expires_at',
        message: `expires_at must be within ${maxDays} days from now (the organization's max_key_lifetime_days)`,
      },
    ]);
  }
  return { expiresAt: requested, defaultDays: null };
}
