import {
  clampedListHistory,
  clampedTaskHistory,
  LIST_HISTORY_BUDGET,
  listHistory,
  taskHistory,
} from './history-limits';

describe('history limits', () => {
  const refused = expect.objectContaining({
    status: 400,
    code: 'validation_failed',
    extra: { errors: [expect.objectContaining({ field: 'history_length' })] },
  });

  it('REST, one task: the latest max when absent; up to max as asked; beyond → 400', () => {
    expect(taskHistory(undefined, 100)).toBe(100);
    expect(taskHistory(0, 100)).toBe(0);
    expect(taskHistory(100, 100)).toBe(100);
    expect(() => taskHistory(101, 100)).toThrow(refused);
  });

  it('REST, a page: one message each when absent; history_length × limit within the budget; never above max', () => {
    expect(LIST_HISTORY_BUDGET).toBe(200);
    expect(listHistory(undefined, 200, 100)).toBe(1);
    expect(listHistory(4, 50, 100)).toBe(4);
    expect(() => listHistory(5, 50, 100)).toThrow(refused);
    expect(() => listHistory(2, 200, 100)).toThrow(refused);
    expect(listHistory(100, 2, 100)).toBe(100);
    expect(() => listHistory(101, 1, 100)).toThrow(refused);
    expect(() => listHistory(11, 1, 10)).toThrow(refused);
    expect(listHistory(0, 200, 100)).toBe(0);
  });

  it('protocol, one task: absent or too many → max', () => {
    expect(clampedTaskHistory(undefined, 100)).toBe(100);
    expect(clampedTaskHistory(5, 100)).toBe(5);
    expect(clampedTaskHistory(1_000_000, 100)).toBe(100);
    expect(clampedTaskHistory(0, 100)).toBe(0);
  });

  it('protocol, a page: each task gets at most its share of the budget', () => {
    expect(clampedListHistory(undefined, 50, 100)).toBe(4);
    expect(clampedListHistory(100, 100, 100)).toBe(2);
    expect(clampedListHistory(1, 100, 100)).toBe(1);
    expect(clampedListHistory(undefined, 1, 100)).toBe(100);
    expect(clampedListHistory(undefined, 1, 30)).toBe(30);
    expect(clampedListHistory(0, 50, 100)).toBe(0);
  });

  it('a page never carries more than the budget, whatever is asked', () => {
    for (let size = 1; size <= 200; size++) {
      for (const max of [1, 10, 100, 10_000]) {
        expect(size * clampedListHistory(1_000_000, size, max)).toBeLessThanOrEqual(LIST_HISTORY_BUDGET);
        expect(clampedListHistory(1_000_000, size, max)).toBeLessThanOrEqual(max);
      }
    }
  });
});
