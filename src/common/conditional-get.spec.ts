import { ifNoneMatchMatches } from './conditional-get';

describe('ifNoneMatchMatches (RFC 9110 §13.1.2)', () => {
  const etag = '"abc123"';

  it.each([
    ['"abc123"', true],
    ['W/"abc123"', true],
    ['"zzz", "abc123"', true],
    ['W/"zzz",W/"abc123"', true],
    ['*', true],
    [' * ', true],
    ['"abc1234"', false],
    ['"ABC123"', false],
    ['abc123', false],
    ['"zzz"', false],
    ['', false],
  ])('%j → %s', (header, expected) => {
    expect(ifNoneMatchMatches(header, etag)).toBe(expected);
  });

  it('no header never matches', () => {
    expect(ifNoneMatchMatches(undefined, etag)).toBe(false);
  });

  it('compares weakly on our side too', () => {
    expect(ifNoneMatchMatches('"abc123"', 'W/"abc123"')).toBe(true);
  });
});
