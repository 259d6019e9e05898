import { spokenVersion } from './a2a-version';

describe('spokenVersion', () => {
  it('names 1.0 and 0.3, a patch number ignored and the value trimmed', () => {
    expect(['1.0', '1.0.3', ' 1.0 ', '0.3', '0.3.0'].map(spokenVersion)).toEqual(['1.0', '1.0', '1.0', '0.3', '0.3']);
  });

  it('refuses every other version, and what is not a version', () => {
    for (const version of ['', '1', '2.0', '0.2', '1.0.0.0', '1.0-rc', 'x', '01.0']) {
      expect({ version, spoken: spokenVersion(version) }).toEqual({ version, spoken: null });
    }
  });
});
