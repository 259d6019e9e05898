import { Writable } from 'node:stream';
import { QueryFailedError } from 'typeorm';
import { createLogger, serializeError } from './logger';

describe('error logging', () => {
  const failedQuery = () => {
    const driverError = Object.assign(new Error('invalid input syntax for type uuid: "TOP-SECRET"'), { code: '22P02' });
    return new QueryFailedError('INSERT INTO push_configs (token) VALUES ($1)', ['TOP-SECRET-TOKEN'], driverError);
  };

  it('keeps a database error\'s code and stack frames, never its SQL, parameters or message', () => {
    const serialized = serializeError(failedQuery());
    expect(serialized).toMatchObject({ type: 'QueryFailedError', code: '22P02', message: 'database error 22P02' });
    expect(JSON.stringify(serialized)).not.toMatch(/TOP-SECRET|INSERT INTO/);
    expect(String(serialized.stack)).toMatch(/^\s+at /);
  });

  it('is what the logger writes for { err }', () => {
    const lines: string[] = [];
    const logger = createLogger('info', new Writable({ write(chunk, _, done) { lines.push(String(chunk)); done(); } }));
    logger.error({ err: failedQuery() }, 'something failed');
    logger.error({ err: new Error('plain failure') }, 'other');
    expect(lines.join('')).not.toMatch(/TOP-SECRET|INSERT INTO/);
    expect(JSON.parse(lines[1]).err).toMatchObject({ type: 'Error', message: 'plain failure' });
  });
});
