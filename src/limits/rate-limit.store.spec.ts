import { estimate, MemoryRateLimitStore } from './rate-limit.store';
import { quotaState } from './rate-limit.service';

describe('sliding-window rate limiting', () => {
  const W = 60_000;
  let now = 0;
  const store = () => new MemoryRateLimitStore(() => now);
  const consume = (s: MemoryRateLimitStore, limit: number) => s.apply('k', W, { kind: 'consume', limit, cost: 1 });

  beforeEach(() => {
    now = 10 * W; // the start of a window
  });

  it('admits up to the limit within a window, then refuses without counting the refusals', async () => {
    const s = store();
    for (let i = 0; i < 5; i++) {
      expect((await consume(s, 5)).admitted).toBe(true);
    }
    const refused = await consume(s, 5);
    expect(refused).toMatchObject({ admitted: false, current: 5 });
    expect((await consume(s, 5)).current).toBe(5);
  });

  it('weights the previous window by the unelapsed share of the current one', async () => {
    const s = store();
    for (let i = 0; i < 10; i++) {
      await consume(s, 10);
    }
    now = 11 * W + W / 4; // a quarter into the next window: 10 × 0.75 = 7.5 still count
    const admitted = [];
    for (let i = 0; i < 5; i++) {
      admitted.push((await consume(s, 10)).admitted);
    }
    expect(admitted).toEqual([true, true, false, false, false]);
    now = 11 * W + (3 * W) / 4; // 10 × 0.25 + 2 = 4.5 → room for 5 more
    const later = [];
    for (let i = 0; i < 6; i++) {
      later.push((await consume(s, 10)).admitted);
    }
    expect(later).toEqual([true, true, true, true, true, false]);
  });

  it('forgets a subject after two idle windows', async () => {
    const s = store();
    for (let i = 0; i < 3; i++) {
      await consume(s, 3);
    }
    now += 2 * W;
    expect(await consume(s, 3)).toMatchObject({ admitted: true, previous: 0, current: 1 });
  });

  it("a sweep triggered by a per-minute quota keeps an hourly quota's counts", async () => {
    const s = store();
    const HOUR = 3_600_000;
    now = 10 * HOUR;
    for (let i = 0; i < 10; i++) {
      await s.apply('signup:ip', HOUR, { kind: 'consume', limit: 10, cost: 1 });
    }
    now += 61_000; // a minute later an unrelated per-minute request sweeps
    await s.apply('rest:key', W, { kind: 'consume', limit: 10, cost: 1 });
    expect((await s.apply('signup:ip', HOUR, { kind: 'consume', limit: 10, cost: 1 })).admitted).toBe(false);
    now += 2 * HOUR + 61_000; // two hours idle: now it may go
    await s.apply('rest:key', W, { kind: 'consume', limit: 10, cost: 1 });
    expect((await s.apply('signup:ip', HOUR, { kind: 'read' })).current).toBe(0);
  });

  it('keeps subjects apart', async () => {
    const s = store();
    await s.apply('a', W, { kind: 'consume', limit: 1, cost: 1 });
    expect((await s.apply('a', W, { kind: 'consume', limit: 1, cost: 1 })).admitted).toBe(false);
    expect((await s.apply('b', W, { kind: 'consume', limit: 1, cost: 1 })).admitted).toBe(true);
  });

  it('counts failures unconditionally with add, and clears them', async () => {
    const s = store();
    for (let i = 0; i < 4; i++) {
      await s.apply('k', W, { kind: 'add', cost: 1 });
    }
    expect((await s.apply('k', W, { kind: 'read' })).current).toBe(4);
    await s.clear('k');
    expect((await s.apply('k', W, { kind: 'read' })).current).toBe(0);
  });

  it('estimates with the linear weight', () => {
    expect(estimate({ previous: 8, current: 3, elapsedMs: W / 2 }, W)).toBe(7);
  });

  describe('the reported state', () => {
    it('remaining and reset for an admitted request', () => {
      const state = quotaState('rest', 10, W, { previous: 0, current: 4, elapsedMs: W / 2, admitted: true }, true);
      expect(state).toMatchObject({
        remaining: 6,
        retryAfterSeconds: 0,
        resetSeconds: 90,
        windowSeconds: 60,
        limit: 10,
      });
    });

    it('retry-after points at the moment one more request fits (previous window decaying)', () => {
      // previous 10, current 0, limit 10, at e = 0: estimate 10. One more fits when
      // 10·(W−t)/W ≤ 9 → t = W/10 = 6 s.
      const state = quotaState('rest', 10, W, { previous: 10, current: 0, elapsedMs: 0, admitted: false }, false);
      expect(state.retryAfterSeconds).toBe(6);
      expect(state.remaining).toBe(0);
    });

    it('retry-after waits into the next window when the current one is full', () => {
      // current 10 at e = W/2: next window starts in 30 s, then 10·(W−x)/W ≤ 9 → x = 6 s.
      const state = quotaState('rest', 10, W, { previous: 0, current: 10, elapsedMs: W / 2, admitted: false }, false);
      expect(state.retryAfterSeconds).toBe(36);
    });
  });
});
