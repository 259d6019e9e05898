import { ConfigError, databasePipeline, loadConfig } from './config';

describe('DATABASE_PIPELINE', () => {
  it('on by default; off sends a transaction’s statements one at a time; anything else is refused', () => {
    expect(loadConfig({}).databasePipeline).toBe(true);
    expect(loadConfig({ DATABASE_PIPELINE: 'on' }).databasePipeline).toBe(true);
    expect(loadConfig({ DATABASE_PIPELINE: 'off' }).databasePipeline).toBe(false);
    expect(databasePipeline({ DATABASE_PIPELINE: '' })).toBe(true);
    expect(() => loadConfig({ DATABASE_PIPELINE: 'false' })).toThrow(ConfigError);
    expect(() => loadConfig({ DATABASE_PIPELINE: 'false' })).toThrow('DATABASE_PIPELINE must be one of on, off');
  });
});
