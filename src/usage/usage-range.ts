import { badRequest } from '../common/app-error';

const DAY_MS = 24 * 3600_000;
/** The longest range one usage query reads (docs/api.md §18). */
export const MAX_USAGE_RANGE_DAYS = 400;

/**
 * The range of a usage query (docs/api.md §18): tasks created in [from, to), `to` now by
 * default and `from` 30 days before it, `from` rounded down to its hour (rollups are
 * hourly); at most MAX_USAGE_RANGE_DAYS. A range that ends before it starts, or is longer,
 * is 400 `validation_failed`.
 */
export function usageRange(query: { from?: string; to?: string }): { from: Date; to: Date } {
  const to = query.to ? new Date(query.to) : new Date();
  const from = floorHour(query.from ? new Date(query.from) : new Date(to.getTime() - 30 * DAY_MS));
  if (from.getTime() >= to.getTime()) {
    throw badRequest('validation_failed', '`from` must be before `to`.', [
      { field: 'from', message: 'from must be before to' },
    ]);
  }
  if (to.getTime() - from.getTime() > MAX_USAGE_RANGE_DAYS * DAY_MS) {
    throw badRequest('validation_failed', `A usage query covers at most ${MAX_USAGE_RANGE_DAYS} days.`, [
      { field: 'from', message: `the range is at most ${MAX_USAGE_RANGE_DAYS} days` },
    ]);
  }
  return { from, to };
}

function floorHour(at: Date): Date {
  return new Date(Math.floor(at.getTime() / 3600_000) * 3600_000);
}
