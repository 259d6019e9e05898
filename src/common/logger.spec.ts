import { Writable } from 'node:stream';
import { QueryFailedError } from 'typeorm';
import { createLogger, routeConsoleToLogger, serializeError } from './logger';

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

describe('log lines cannot be forged', () => {
  const capture = () => {
    const chunks: string[] = [];
    const logger = createLogger('debug', new Writable({ write(chunk, _, done) { chunks.push(String(chunk)); done(); } }));
    return { logger, lines: () => chunks.join('').split('\n').filter(Boolean) };
  };
  const attack = 'x\n{"level":50,"msg":"forged"}\r\u0085{"msg":"forged2"}\u2028{"msg":"forged3"}\u2029\u001b[31m\u007f';

  it('every value, key and message is escaped: one entry is one line, read back unchanged', () => {
    const { logger, lines } = capture();
    logger.warn({ reason: attack, [attack]: 1 }, attack);
    expect(lines()).toHaveLength(1);
    expect(lines()[0]).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/);
    const entry = JSON.parse(lines()[0]);
    expect(entry).toMatchObject({ msg: attack, reason: attack, [attack]: 1 });
  });

  it('console output of dependencies becomes log entries, and process warnings too', () => {
    const { logger, lines } = capture();
    const saved = { ...console };
    const listeners = process.listeners('warning');
    try {
      routeConsoleToLogger(logger);
      console.warn('toCoreAuthenticationInfo: Multiple schemes declared (%s)', attack);
      console.log('plain');
      process.emit('warning', Object.assign(new Error(attack), { name: 'DeprecationWarning' }));
    } finally {
      Object.assign(console, saved);
      process.removeAllListeners('warning');
      for (const listener of listeners) process.on('warning', listener);
    }
    const entries = lines().map((line) => JSON.parse(line));
    expect(entries).toEqual([
      expect.objectContaining({ level: 40, source: 'console', msg: `toCoreAuthenticationInfo: Multiple schemes declared (${attack})` }),
      expect.objectContaining({ level: 30, source: 'console', msg: 'plain' }),
      expect.objectContaining({ level: 40, source: 'process', type: 'DeprecationWarning', msg: attack }),
    ]);
  });
});
