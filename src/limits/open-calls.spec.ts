import { OpenCalls } from './open-calls';

describe('OpenCalls', () => {
  it('gives each key up to max slots; a released slot can be taken again', () => {
    const calls = new OpenCalls(2);
    const first = calls.take('k1')!;
    const second = calls.take('k1')!;
    expect(first).toEqual(expect.any(Function));
    expect(second).toEqual(expect.any(Function));
    expect(calls.take('k1')).toBeNull();
    expect(calls.take('k2')).not.toBeNull();
    first();
    expect(calls.count('k1')).toBe(1);
    expect(calls.take('k1')).not.toBeNull();
    expect(calls.take('k1')).toBeNull();
  });

  it('releasing twice gives back one slot, and a key with none open is forgotten', () => {
    const calls = new OpenCalls(1);
    const release = calls.take('k')!;
    release();
    release();
    expect(calls.count('k')).toBe(0);
    expect(calls.take('k')).not.toBeNull();
    expect(calls.take('k')).toBeNull();
  });
});
