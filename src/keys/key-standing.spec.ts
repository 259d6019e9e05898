import type { AppError } from '../common/app-error';
import { expiredKey, keyLifetime, lostKey } from './key-standing';

const DAY_MS = 86_400_000;
const NOW = Date.parse('2026-12-01T00:00:00.000Z');
const at = (days: number) => new Date(NOW + days * DAY_MS);

/** The field errors `work` throws, or what it returned. */
function fieldErrors(work: () => unknown): unknown {
  try {
    return work();
  } catch (error) {
    const { status, code, extra } = error as AppError;
    return { status, code, fields: extra.errors?.map((e) => e.field) };
  }
}

describe('a key lifetime (docs/api.md §2)', () => {
  it('without expires_at: never, or the organization maximum from creation (the database adds it)', () => {
    expect(keyLifetime(undefined, null, NOW)).toEqual({ expiresAt: null, defaultDays: null });
    expect(keyLifetime(undefined, 30, NOW)).toEqual({ expiresAt: null, defaultDays: 30 });
  });

  it('expires_at in the future is kept, up to the maximum itself', () => {
    expect(keyLifetime(at(400), null, NOW)).toEqual({ expiresAt: at(400), defaultDays: null });
    expect(keyLifetime(at(30), 30, NOW)).toEqual({ expiresAt: at(30), defaultDays: null });
  });

  it.each([
    ['now', at(0), null],
    ['in the past', at(-1), 30],
    ['a millisecond past the maximum', new Date(at(30).getTime() + 1), 30],
  ])('expires_at %s → 400 naming expires_at', (_, requested, max) => {
    expect(fieldErrors(() => keyLifetime(requested, max, NOW))).toEqual({
      status: 400,
      code: 'validation_failed',
      fields: ['expires_at'],
    });
  });
});

describe("a key's standing", () => {
  it('active: no refusal; revoked and expired: 401 with their own codes', () => {
    expect(lostKey('active')).toBeNull();
    expect(lostKey('revoked')).toMatchObject({ status: 401, code: 'invalid_api_key' });
    expect(lostKey('expired')).toMatchObject({ status: 401, code: 'api_key_expired' });
  });

  it('the refusal of an expired key says when it expired', () => {
    expect(expiredKey(at(0))).toMatchObject({
      status: 401,
      code: 'api_key_expired',
      detail: expect.stringContaining('2026-12-01T00:00:00.000Z'),
    });
  });
});
