import { Writable } from 'node:stream';
import { ROOT_CONTEXT, trace, TraceFlags } from '@opentelemetry/api';
import { QueryFailedError } from 'typeorm';
import { loadConfig } from '../config/config';
import { runInContext } from '../tracing/context-storage';
import { createLogger, routeConsoleToLogger, serializeError } from './logger';
import { runInRequestContext, traceIdOf } from './request-context';

describe('error logging', () => {
  const failedQuery = () => {
    const driverError = Object.assign(new Error('invalid input syntax for type uuid: "TOP-SECRET"'), { code: '22P02' });
    return new QueryFailedError('INSERT INTO push_configs (token) VALUES ($1)', ['TOP-SECRET-TOKEN'], driverError);
  };

  it("keeps a database error's code and stack frames, never its SQL, parameters or message", () => {
    const serialized = serializeError(failedQuery());
    expect(serialized).toMatchObject({ type: 'QueryFailedError', code: '22P02', message: 'database error 22P02' });
    expect(JSON.stringify(serialized)).not.toMatch(/TOP-SECRET|INSERT INTO/);
    expect(String(serialized.stack)).toMatch(/^\s+at /);
  });

  it('is what the logger writes for { err }', () => {
    const lines: string[] = [];
    const logger = createLogger(
      'info',
      new Writable({
        write(chunk, _, done) {
          lines.push(String(chunk));
          done();
        },
      }),
    );
    logger.error({ err: failedQuery() }, 'something failed');
    logger.error({ err: new Error('plain failure') }, 'other');
    expect(lines.join('')).not.toMatch(/TOP-SECRET|INSERT INTO/);
    expect(JSON.parse(lines[1]).err).toMatchObject({ type: 'Error', message: 'plain failure' });
  });
});

describe('log lines cannot be forged', () => {
  const capture = () => {
    const chunks: string[] = [];
    const logger = createLogger(
      'debug',
      new Writable({
        write(chunk, _, done) {
          chunks.push(String(chunk));
          done();
        },
      }),
    );
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
      for (const listener of listeners) {
        process.on('warning', listener);
      }
    }
    const entries = lines().map((line) => JSON.parse(line));
    expect(entries).toEqual([
      expect.objectContaining({
        level: 40,
        source: 'console',
        msg: `toCoreAuthenticationInfo: Multiple schemes declared (${attack})`,
      }),
      expect.objectContaining({ level: 30, source: 'console', msg: 'plain' }),
      expect.objectContaining({ level: 40, source: 'process', type: 'DeprecationWarning', msg: attack }),
    ]);
  });
});

describe('request context and formats', () => {
  const sink = () => {
    const chunks: string[] = [];
    const stream = new Writable({
      write(chunk, _, done) {
        chunks.push(String(chunk));
        done();
      },
    });
    return { stream, lines: () => chunks.join('').split('\n').filter(Boolean) };
  };

  it('every line inside a request context carries request_id, trace_id and principal; outside, none', async () => {
    const { stream, lines } = sink();
    const logger = createLogger('info', stream);
    const context = {
      requestId: 'req-00000001',
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      principal: undefined as { kind: string; id: string } | undefined,
    };
    await runInRequestContext(context, async () => {
      logger.info('before auth');
      context.principal = { kind: 'agent', id: 'k1' };
      await new Promise((resolve) => setTimeout(resolve, 1));
      logger.warn({ request_id: 'explicit' }, 'after auth, later');
    });
    logger.info('outside');
    const [before, after, outside] = lines().map((line) => JSON.parse(line));
    expect(before).toMatchObject({ request_id: 'req-00000001', trace_id: context.traceId });
    expect(before.principal).toBeUndefined();
    expect(after).toMatchObject({ request_id: 'explicit', principal: { kind: 'agent', id: 'k1' } });
    expect(outside.request_id).toBeUndefined();
  });

  it("the active span's trace id wins over the traceparent header's; the span stays when a request context begins", () => {
    const { stream, lines } = sink();
    const logger = createLogger('info', stream);
    const span = trace.wrapSpanContext({
      traceId: 'f'.repeat(32),
      spanId: '1'.repeat(16),
      traceFlags: TraceFlags.SAMPLED,
    });
    runInContext(trace.setSpan(ROOT_CONTEXT, span), () =>
      runInRequestContext({ requestId: 'req-00000002', traceId: 'a'.repeat(32) }, () => logger.info('x')),
    );
    expect(JSON.parse(lines()[0])).toMatchObject({ request_id: 'req-00000002', trace_id: 'f'.repeat(32) });
  });

  it("traceparent: a valid header's trace id, else none", () => {
    expect(traceIdOf('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01')).toBe(
      '4bf92f3577b34da6a3ce929d0e0e4736',
    );
    expect(traceIdOf('00-00000000000000000000000000000000-00f067aa0ba902b7-01')).toBeUndefined();
    expect(traceIdOf('garbage')).toBeUndefined();
    expect(traceIdOf(undefined)).toBeUndefined();
  });

  it('LOG_FORMAT=pretty: one human-readable line per entry, values that could forge a line quoted', () => {
    const { stream, lines } = sink();
    const logger = createLogger('info', stream, 'pretty');
    runInRequestContext({ requestId: 'req-00000003', principal: { kind: 'console', id: 'u1' } }, () =>
      logger.warn({ delivery_id: 'd1', reason: 'x\n{"msg":"forged"}' }, 'webhook delivery failed'),
    );
    expect(lines()).toHaveLength(1);
    const [line] = lines();
    expect(line).toMatch(/^\d\d:\d\d:\d\d\.\d{3} WARN {2}webhook delivery failed /);
    expect(line).toContain('request_id=req-00000003');
    expect(line).toContain('principal=kind:console,id:u1');
    expect(line).toContain('delivery_id=d1');
    expect(line).toContain('reason="x\\n{\\"msg\\":\\"forged\\"}"');
    expect(() => JSON.parse(line)).toThrow();
  });

  it('LOG_FORMAT is json, pretty or auto (the default); anything else stops the start', () => {
    expect(loadConfig({}).logFormat).toBe('auto');
    expect(loadConfig({ LOG_FORMAT: 'pretty' }).logFormat).toBe('pretty');
    expect(() => loadConfig({ LOG_FORMAT: 'fancy' })).toThrow(/LOG_FORMAT must be one of json, pretty, auto/);
  });

  it('json is the default when not forced; auto is JSON when the output is not a terminal', () => {
    const { stream, lines } = sink();
    createLogger('info', stream, 'auto').info('x');
    expect(JSON.parse(lines()[0])).toMatchObject({ msg: 'x' });
  });
});
