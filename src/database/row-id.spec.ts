import { newRowId } from './row-id';

describe('newRowId', () => {
  const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

  it('is a UUID version 7 whose first 48 bits are the time in milliseconds', () => {
    const now = Date.UTC(2026, 10, 27, 2, 45, 0, 123);
    const id = newRowId(now);
    expect(id).toMatch(UUID_V7);
    expect(parseInt(id.replace(/-/g, '').slice(0, 12), 16)).toBe(now);
  });

  it('sorts by the time it carries, and never repeats', () => {
    const ids = Array.from({ length: 5_000 }, (_, i) => newRowId(1_700_000_000_000 + Math.floor(i / 10)));
    expect(new Set(ids).size).toBe(ids.length);
    const times = ids.map((id) => id.slice(0, 13));
    expect([...times].sort()).toEqual(times);
    // 74 random bits: two ids of the same millisecond differ past the time.
    expect(ids[0].slice(14)).not.toBe(ids[1].slice(14));
  });

  it('takes the time now by default', () => {
    const before = Date.now();
    const at = parseInt(newRowId().replace(/-/g, '').slice(0, 12), 16);
    expect(at).toBeGreaterThanOrEqual(before);
    expect(at).toBeLessThanOrEqual(Date.now());
  });
});
