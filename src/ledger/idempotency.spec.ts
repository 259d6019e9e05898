import { canonicalJson, IdempotencyStore } from './idempotency';

describe('Idempotency-Key helpers', () => {
  it('canonical JSON ignores key order and undefined members, not array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, 1], c: 'x' }, e: undefined })).toBe('{"a":{"c":"x","d":[2,1]},"b":1}');
    expect(canonicalJson({ a: 1, b: 2 })).toBe(canonicalJson({ b: 2, a: 1 }));
    expect(canonicalJson([1, 2])).not.toBe(canonicalJson([2, 1]));
  });

  it('hashes the target with the body', () => {
    const body = { state: 'working' };
    expect(IdempotencyStore.hash('reply a', body).equals(IdempotencyStore.hash('reply a', { ...body }))).toBe(true);
    expect(IdempotencyStore.hash('reply a', body).equals(IdempotencyStore.hash('reply b', body))).toBe(false);
  });

  it.each([
    ['', false],
    ['k', true],
    ['x'.repeat(255), true],
    ['x'.repeat(256), false],
    ['with space', false],
    ['tab\t', false],
    ['é', false],
    ['a-b_c.d:e/f=', true],
  ])('key %j valid: %s', (key, valid) => {
    if (valid) {
      expect(IdempotencyStore.parseKey(key)).toBe(key);
    } else {
      expect(() => IdempotencyStore.parseKey(key)).toThrow(
        expect.objectContaining({ code: 'invalid_idempotency_key' }),
      );
    }
  });

  it('no header, no key', () => {
    expect(IdempotencyStore.parseKey(undefined)).toBeUndefined();
    expect(() => IdempotencyStore.parseKey(['a', 'b'])).toThrow();
  });
});
