import { handleProblem, isHandle, RESERVED_HANDLES } from './handle';

describe('agent handles', () => {
  it.each(['abc', 'acme-billing', 'a1b', '007', 'a-b-c', 'x'.repeat(63), 'agent-2'])('accepts %s', (handle) => {
    expect(handleProblem(handle)).toBeNull();
    expect(isHandle(handle)).toBe(true);
  });

  it.each([
    ['', '3 to 63'],
    ['ab', '3 to 63'],
    ['x'.repeat(64), '3 to 63'],
    ['Acme', 'a-z, 0-9'],
    ['-acme', 'start and end'],
    ['acme-', 'start and end'],
    ['ac_me', 'a-z, 0-9'],
    ['ac.me', 'a-z, 0-9'],
    ['ac me', 'a-z, 0-9'],
    ['acmé', 'a-z, 0-9'],
    ['acme\n', 'a-z, 0-9'],
  ])('refuses %j (%s)', (handle, reason) => {
    expect(handleProblem(handle)).toContain(reason);
    expect(isHandle(handle)).toBe(false);
  });

  it.each(['directory', 'api', 'console', 'well-known', 'claim', 'agent-signup'])(
    'refuses the reserved word %s',
    (handle) => {
      expect(handleProblem(handle)).toBe(`agent_handle "${handle}" is reserved`);
    },
  );

  it('reserves only words that are themselves valid handles (the list has no dead entries)', () => {
    for (const word of RESERVED_HANDLES) {
      expect(isHandle(word)).toBe(true);
    }
  });
});
