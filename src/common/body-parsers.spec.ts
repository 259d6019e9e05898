import { bodyProblem, decodingError, loneSurrogatePath, reservedKeyPath } from './body-parsers';

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

  it('finds a lone surrogate in any string or key; a pair (an emoji) is text', () => {
    expect(bodyProblem({ a: ['ok', { b: 'x\ud800' }] }, 64)).toBe('lone_surrogate');
    expect(bodyProblem({ ['k\udc00']: 1 }, 64)).toBe('lone_surrogate');
    expect(bodyProblem('\udfff\ud800', 64)).toBe('lone_surrogate');
    expect(bodyProblem({ a: ['😀', { b: '\ud83d\ude00' }] }, 64)).toBeNull();
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

describe('loneSurrogatePath', () => {
  it('names the string, or the object whose key is not text', () => {
    expect(loneSurrogatePath({ email: 'a\ud800@b.test' })).toBe('email');
    expect(loneSurrogatePath({ message: { parts: [{ text: 'ok' }, { text: '\ud83d' }] } })).toBe(
      'message.parts[1].text',
    );
    expect(loneSurrogatePath({ metadata: { ['k\ud800']: 1 } })).toBe('metadata');
    expect(loneSurrogatePath('\ud800')).toBe('');
    expect(loneSurrogatePath({ a: '😀' })).toBeNull();
  });
});

describe('decodingError', () => {
  const zlibError = Object.assign(new Error('incorrect header check'), { code: 'Z_DATA_ERROR', status: 400 });
  it('is a 400 for an error without a body-parser type under a Content-Encoding', () => {
    expect(decodingError({ headers: { 'content-encoding': 'gzip' } }, zlibError)).toMatchObject({
      status: 400,
      code: 'invalid_content_encoding',
    });
  });
  it('leaves the body parser’s own errors and unencoded bodies alone', () => {
    expect(decodingError({ headers: {} }, zlibError)).toBeNull();
    expect(decodingError({ headers: { 'content-encoding': 'identity' } }, zlibError)).toBeNull();
    expect(
      decodingError({ headers: { 'content-encoding': 'gzip' } }, { type: 'entity.too.large', status: 413 }),
    ).toBeNull();
  });
});
