import { badRequest } from '../common/app-error';
import { MAX_PAGE_SIZE } from '../common/pagination';

/**
 * How much history a read returns. A task may hold up to LEDGER_MAX_MESSAGES_PER_TASK
 * messages of up to a request body each, so no read returns a whole history: one task
 * carries at most `max` (LEDGER_MAX_HISTORY) of its latest messages, and a page of
 * tasks at most LIST_HISTORY_BUDGET in all. REST refuses a request beyond the limits
 * (the full history pages through GET /api/v1/tasks/{id}/messages); the protocol
 * clamps it, since A2A lets a server return less history than asked for.
 */

/** Messages one page of tasks carries in all: one each on the largest page. */
export const LIST_HISTORY_BUDGET = MAX_PAGE_SIZE;

/** REST, one task: the latest `max` when absent; more than `max` → 400. */
export function taskHistory(requested: number | undefined, max: number): number {
  if (requested === undefined) {
    return max;
  }
  if (requested > max) {
    throw tooLong(`history_length is at most ${max}; page through GET /api/v1/tasks/{id}/messages for more.`);
  }
  return requested;
}

/** REST, a page of tasks: 1 when absent; more than `max`, or more than the budget over `limit` tasks → 400. */
export function listHistory(requested: number | undefined, limit: number, max: number): number {
  if (requested === undefined) {
    return 1;
  }
  const allowed = listShare(limit, max);
  if (requested > allowed) {
    throw tooLong(
      `history_length × limit is at most ${LIST_HISTORY_BUDGET} (and history_length at most ${max}): with limit ${limit}, history_length is at most ${allowed}.`,
    );
  }
  return requested;
}

/** Protocol, one task: the latest `max` when absent or when more is asked for. */
export function clampedTaskHistory(requested: number | undefined, max: number): number {
  return Math.min(requested ?? max, max);
}

/** Protocol, a page of `pageSize` tasks: each carries at most its share of the budget (and at most `max`). */
export function clampedListHistory(requested: number | undefined, pageSize: number, max: number): number {
  const allowed = listShare(pageSize, max);
  return Math.min(requested ?? allowed, allowed);
}

/** Each task's share of a page's budget, at most `max`. */
function listShare(pageSize: number, max: number): number {
  return Math.min(max, Math.floor(LIST_HISTORY_BUDGET / pageSize));
}

function tooLong(message: string) {
  return badRequest('validation_failed', message, [{ field: 'history_length', message }]);
}
