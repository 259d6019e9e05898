import { ConfigError, loadConfig } from '../config/config';
import { retryDelay } from './retry-schedule';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

describe('retry schedule', () => {
  const schedule = loadConfig({}).events.retryScheduleMs;

  it('defaults to 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h', () => {
    expect(schedule).toEqual([5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR]);
  });

  it('counts a delivery as successful only with a 2xx within 15 s by default', () => {
    expect(loadConfig({}).events.timeoutMs).toBe(15 * SECOND);
  });

  it('waits the n-th interval after the n-th failed attempt, then gives up after the eighth', () => {
    const waits = [1, 2, 3, 4, 5, 6, 7, 8].map((attempt) => retryDelay(schedule, attempt));
    expect(waits).toEqual([5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR, null]);
    expect(retryDelay(schedule, 9)).toBeNull();
  });

  it('a manual retry past the schedule is a single attempt', () => {
    expect(retryDelay(schedule, 12)).toBeNull();
  });

  it('is configurable as a comma-separated list of milliseconds', () => {
    expect(loadConfig({ WEBHOOK_RETRY_SCHEDULE_MS: '100, 200,300' }).events.retryScheduleMs).toEqual([100, 200, 300]);
    expect(retryDelay([100, 200], 3)).toBeNull();
    for (const bad of ['1s', '100,,200', '-5', '1.5', Array(21).fill('1').join(',')]) {
      expect(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE_MS: bad })).toThrow(ConfigError);
    }
  });
});
