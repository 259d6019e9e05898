import { newEventId } from './event-id';

describe('newEventId', () => {
  it('is evt_ and 26 Crockford characters, its randomness drawn from the pool: never repeated', () => {
    const ids = Array.from({ length: 2_000 }, () => newEventId(1_700_000_000_000));
    for (const id of ids.slice(0, 20)) {
      expect(id).toMatch(/^evt_[0-9A-HJKMNP-TV-Z]{26}$/);
    }
    expect(new Set(ids).size).toBe(ids.length);
  });
});
