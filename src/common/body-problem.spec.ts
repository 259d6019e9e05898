import { bodyProblem, firstPath, requestBodyProblem } from './body-problem';

const exceedsDepth = (value: unknown, limit: number) => bodyProblem(value, limit).found === 'too_deep';

describe('firstPath', () => {
  it('walks in document order and names where the test found something', () => {
    const seen: string[] = [];
    const found = firstPath({ a: [1, { b: 'x' }], c: 'y' }, (node, depth, key) => {
      seen.push(`${key ?? '-'}@${depth}`);
      return node === 'x' ? 'found x' : null;
    });
    expect(found).toEqual({ found: 'found x', path: 'a[1].b' });
    expect(seen).toEqual(['-@1', 'a@2', '-@3', '-@3', 'b@4']);
    expect(firstPath([], () => null)).toEqual({ found: null, path: '' });
    expect(firstPath('x', (node) => node)).toEqual({ found: 'x', path: '' });
  });
});

describe('bodyProblem', () => {
  const nest = (levels: number): unknown => {
    let value: unknown = 1;
    for (let i = 0; i < levels; i++) {
      value = i % 2 ? [value] : { a: value };
    }
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
    expect(bodyProblem({ a: ['ok', { b: 'x\u0000y' }] }, 64).found).toBe('nul_character');
    expect(bodyProblem({ ['k\u0000']: 1 }, 64).found).toBe('nul_character');
    expect(bodyProblem({ a: ['fine', { b: 'ü\u0001' }] }, 64).found).toBeNull();
  });

  it('finds a lone surrogate in any string or key, and names it; a pair (an emoji) is text', () => {
    expect(bodyProblem({ a: ['ok', { b: 'x\ud800' }] }, 64)).toEqual({ found: 'lone_surrogate', path: 'a[1].b' });
    expect(bodyProblem({ ['k\udc00']: 1 }, 64)).toEqual({ found: 'lone_surrogate', path: '' });
    expect(bodyProblem('\udfff\ud800', 64)).toEqual({ found: 'lone_surrogate', path: '' });
    expect(bodyProblem({ a: ['😀', { b: '\ud83d\ude00' }] }, 64).found).toBeNull();
  });

  it('leaves __proto__, constructor and prototype keys alone (they are data to an upstream answer)', () => {
    expect(bodyProblem(JSON.parse('{"data":{"constructor":{"__proto__":1}}}'), 64).found).toBeNull();
  });

  it('walks into a JSON __proto__ member (an own property) as into any other', () => {
    expect(bodyProblem(JSON.parse('{"a":{"__proto__":{"b":"x\\u0000"}}}'), 64)).toEqual({
      found: 'nul_character',
      path: 'a.__proto__.b',
    });
  });

  it('takes bytes (a decoded protobuf message’s) as one value, not as nesting', () => {
    expect(bodyProblem({ a: { data: new Uint8Array([0, 1, 2]) } }, 2).found).toBeNull();
    expect(bodyProblem({ a: { data: { b: 1 } } }, 2).found).toBe('too_deep');
  });

  it('treats scalars and empty containers as shallow', () => {
    expect(exceedsDepth(undefined, 1)).toBe(false);
    expect(exceedsDepth('x', 1)).toBe(false);
    expect(exceedsDepth({}, 1)).toBe(false);
    expect(exceedsDepth([[]], 1)).toBe(true);
  });
});

describe('requestBodyProblem', () => {
  const reserved = (json: string) => requestBodyProblem(JSON.parse(json));

  it('finds __proto__, constructor and prototype as keys at any depth, with their path', () => {
    expect(reserved('{"__proto__":{"admin":true}}')).toEqual({ found: 'reserved_key', path: '__proto__' });
    expect(reserved('{"peer":{"type":"identity","constructor":{}}}')).toEqual({
      found: 'reserved_key',
      path: 'peer.constructor',
    });
    expect(reserved('{"message":{"parts":[{"data":{"prototype":1}}]}}').path).toBe('message.parts[0].data.prototype');
    expect(reserved('[{"a":[{"__proto__":null}]}]').path).toBe('[0].a[0].__proto__');
  });

  it('lets the same words through as values, and ordinary keys', () => {
    expect(
      requestBodyProblem({ label: '__proto__', tags: ['constructor'], proto: { prototypes: 1 } }).found,
    ).toBeNull();
    expect(requestBodyProblem(null).found).toBeNull();
    expect(requestBodyProblem('constructor').found).toBeNull();
  });

  it('names a lone surrogate’s string, or the object whose key is not text', () => {
    expect(requestBodyProblem({ email: 'a\ud800@b.test' })).toEqual({ found: 'lone_surrogate', path: 'email' });
    expect(requestBodyProblem({ message: { parts: [{ text: 'ok' }, { text: '\ud83d' }] } }).path).toBe(
      'message.parts[1].text',
    );
    expect(requestBodyProblem({ metadata: { ['k\ud800']: { a: 1 } } }).path).toBe('metadata');
    expect(requestBodyProblem('\ud800')).toEqual({ found: 'lone_surrogate', path: '' });
    expect(requestBodyProblem({ a: '😀' }).found).toBeNull();
  });

  it('finds every problem in one walk: the first in document order', () => {
    expect(requestBodyProblem(JSON.parse('{"a":"x\\u0000","__proto__":1}')).found).toBe('nul_character');
    expect(requestBodyProblem(JSON.parse('{"__proto__":1,"a":"x\\u0000"}')).found).toBe('reserved_key');
  });
});
