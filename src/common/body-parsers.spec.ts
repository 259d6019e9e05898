import { bodyProblem, reservedKeyPath } from './body-parsers';

const exceedsDepth = (value: unknown, limit: number) => bodyProblem(value, limit) === 'too_deep';

describe('bodyProblem', () => {
  const nest = (levels: number): unknown => {
    let value: unknown = 1;
    for (let i = 0; i < levels; i++) value = i % 2 ? [value] : { a: value };
    return value;
  };

  it.each([
    [1, 1, false],
    [3, 3, false],
    [4, 3, true],
    [64, 64, false],
    [65, 64, true],
    [100_000, 64, true],
  ])('%i levels against a limit of %i → %s', (levels, limit, expected) => {
    expect(exceedsDepth(nest(levels), limit)).toBe(expected);
  });

  it('finds a NUL character in any string or key, however deep', () => {
    expect(bodyProblem({ a: ['ok', { b: 'x\u0000y' }] }, 64)).toBe('nul_character');
    expect(bodyProblem({ ['k\u0000']: 1 }, 64)).toBe('nul_character');
    expect(bodyProblem({ a: ['fine', { b: 'ü\u0001' }] }, 64)).toBeNull();
  });

  it('treats scalars and empty containers as shallow', () => {
    expect(exceedsDepth(undefined, 1)).toBe(false);
    expect(exceedsDepth('x', 1)).toBe(false);
    expect(exceedsDepth({}, 1)).toBe(false);
    expect(exceedsDepth([[]], 1)).toBe(true);
  });
});

describe('reservedKeyPath', () => {
  it('finds __proto__, constructor and prototype as keys at any depth, with their path', () => {
    expect(reservedKeyPath(JSON.parse('{"__proto__":{"admin":true}}'))).toBe('__proto__');
    expect(reservedKeyPath(JSON.parse('{"peer":{"type":"identity","constructor":{}}}'))).toBe('peer.constructor');
    expect(reservedKeyPath(JSON.parse('{"message":{"parts":[{"data":{"prototype":1}}]}}'))).toBe(
      'message.parts[0].data.prototype',
    );
    expect(reservedKeyPath(JSON.parse('[{"a":[{"__proto__":null}]}]'))).toBe('[0].a[0].__proto__');
  });

  it('lets the same words through as values, and ordinary keys', () => {
    expect(reservedKeyPath({ label: '__proto__', tags: ['constructor'], proto: { prototypes: 1 } })).toBeNull();
    expect(reservedKeyPath(null)).toBeNull();
    expect(reservedKeyPath('constructor')).toBeNull();
  });
});
