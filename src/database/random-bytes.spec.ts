import { pooledRandomBytes } from './random-bytes';
import { newEventId } from '../events/event-id';

describe('pooledRandomBytes', () => {
  it('hands out fresh bytes across refills of the pool, never the same draw twice', () => {
    const seen = new Set<string>();
    // 600 draws of 16 bytes: the 4 KB pool refills twice on the way.
    for (let i = 0; i < 600; i++) seen.add(pooledRandomBytes(16).toString('hex'));
    expect(seen.size).toBe(600);
  });

  it('fits a draw that does not fit what is left of the pool into a refilled one', () => {
    const sizes = [4000, 200, 4096, 1];
    for (const size of sizes) expect(pooledRandomBytes(size)).toHaveLength(size);
  });

  it('refuses a draw larger than the pool', () => {
    expect(() => pooledRandomBytes(4097)).toThrow(RangeError);
  });

  it("draws an event id's randomness: 26 Crockford characters after evt_, never repeated", () => {
    const ids = Array.from({ length: 2_000 }, () => newEventId(1_700_000_000_000));
    for (const id of ids.slice(0, 20)) expect(id).toMatch(/^evt_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
