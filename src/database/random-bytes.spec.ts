import { pooledRandomBytes } from './random-bytes';

describe('pooledRandomBytes', () => {
  it('hands out fresh bytes across refills of the pool, never the same draw twice', () => {
    const seen = new Set<string>();
    // 600 draws of 16 bytes: the 4 KB pool refills twice on the way.
    for (let i = 0; i < 600; i++) {
      seen.add(pooledRandomBytes(16).toString('hex'));
    }
    expect(seen.size).toBe(600);
  });

  it('fits a draw that does not fit what is left of the pool into a refilled one', () => {
    const sizes = [4000, 200, 4096, 1];
    for (const size of sizes) {
      expect(pooledRandomBytes(size)).toHaveLength(size);
    }
  });

  it('refuses a draw larger than the pool', () => {
    expect(() => pooledRandomBytes(4097)).toThrow(RangeError);
  });
});
