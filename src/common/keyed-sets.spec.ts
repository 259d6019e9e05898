import { KeyedSets } from './keyed-sets';

describe('KeyedSets', () => {
  it('groups values by key and drops a key with its last value', () => {
    const sets = new KeyedSets<string, number>();
    const removeOne = sets.add('a', 1);
    const removeTwo = sets.add('a', 2);
    sets.add('b', 3);
    expect(sets.get('a')).toEqual([1, 2]);
    expect(sets.has('a', 2)).toBe(true);
    expect(sets.count()).toBe(3);
    removeOne();
    removeOne(); // twice is once
    expect(sets.get('a')).toEqual([2]);
    removeTwo();
    expect(sets.has('a')).toBe(false);
    expect(sets.keys()).toEqual(['b']);
    expect(sets.count('a')).toBe(0);
  });

  it('a removal from a set already dropped leaves the key added since alone', () => {
    const sets = new KeyedSets<string, number>();
    const removeOld = sets.add('a', 1);
    removeOld();
    sets.add('a', 1);
    removeOld(); // the first set is gone: the value added since stays
    expect(sets.get('a')).toEqual([1]);
    const listed = sets.get('a');
    sets.add('a', 2);
    expect(listed).toEqual([1]); // a copy
  });
});
