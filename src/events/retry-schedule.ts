/** A webhook whose every attempt has failed for this long is disabled. */
export const DISABLE_AFTER_MS = 5 * 24 * 3600 * 1000;

/**
 * After attempt number `failedAttempt` (1 = the first send) has failed: the wait
 * before the next attempt, or null when the schedule is spent and the delivery has
 * failed. With the default schedule that is 8 attempts in about 32.6 hours.
 */
export function retryDelay(scheduleMs: readonly number[], failedAttempt: number): number | null {
  return failedAttempt >= 1 && failedAttempt <= scheduleMs.length ? scheduleMs[failedAttempt - 1] : null;
}
