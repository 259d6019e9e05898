import type { Request } from 'express';
import { currentRequestContext } from '../common/request-context';

/**
 * The request a change is made in, for the audit log's request id, client address
 * and (when the caller passes none) actor: read from the request context (the one
 * AsyncLocalStorage of src/common/request-context.ts) rather than threaded through
 * every service signature — changes are recorded deep in call chains shared by
 * several routes (an identity's deletion revokes its keys, signup mints one).
 * Authentication sets the principal on the request before any handler runs.
 */
export function currentRequest(): Request | undefined {
  return currentRequestContext()?.request;
}
