import type { LoggerService } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { Writable } from 'node:stream';
import { format } from 'node:util';
import pino, { type DestinationStream, type Logger } from 'pino';
import { currentRequestContext, currentTraceId, requestTraceId } from './request-context';

/**
 * Structured JSON logs. Request logs carry method, path, status, duration and the
 * request id — never headers or bodies. The redaction list is a second line of
 * defence in case a credential ever reaches a log call.
 */
/**
 * How errors are logged (every `logger.x({ err })`): name, code, message and stack —
 * never a failed query's SQL or parameters (TypeORM's QueryFailedError carries both,
 * and parameters hold request data: message text, push-notification credentials). A
 * database error's own message can quote an input value, so only its code is kept.
 */
export function serializeError(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) {
    return { type: typeof error };
  }
  const driver = (error as { driverError?: { code?: unknown } }).driverError;
  if (driver) {
    const frames = error.stack
      ?.split('\n')
      .filter((line) => line.trimStart().startsWith('at '))
      .join('\n');
    return { type: error.name, code: driver.code, message: `database error ${String(driver.code)}`, stack: frames };
  }
  return { type: error.name, code: (error as { code?: unknown }).code, message: error.message, stack: error.stack };
}

/**
 * JSON already escapes quotes, backslashes and C0 controls (newlines included) in
 * every string; what it leaves raw — DEL, the C1 controls (U+0085 is a line break
 * to some readers) and U+2028/U+2029 — is escaped here, so a logged value can never
 * end a line or start a forged one. Each of these only occurs inside a JSON string.
 */
const UNESCAPED_BY_JSON = /[\u007f-\u009f\u2028\u2029]/g;
export function escapeLine(line: string): string {
  return line.replace(UNESCAPED_BY_JSON, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** `LOG_FORMAT`: JSON lines, a human-readable line per entry, or `auto` (pretty when stdout is a terminal). */
export type LogFormat = 'json' | 'pretty' | 'auto';

/**
 * The request context on every line written while serving a request (request-context.ts):
 * `request_id`, `trace_id` and, once authenticated, `principal` (kind and id). Fields the
 * call itself passes win over these.
 */
export function requestContextFields(): Record<string, unknown> {
  const context = currentRequestContext();
  const traceId = currentTraceId();
  if (!context) {
    return traceId ? { trace_id: traceId } : {};
  }
  const fields: Record<string, unknown> = { request_id: context.requestId };
  if (traceId) {
    fields.trace_id = traceId;
  }
  const principal = context.principal;
  if (principal) {
    fields.principal = principal;
  }
  return fields;
}

export function createLogger(level: string, destination?: DestinationStream, logFormat: LogFormat = 'json'): Logger {
  const pretty =
    logFormat === 'pretty' || (logFormat === 'auto' && destination === undefined && process.stdout.isTTY === true);
  const out = pretty ? prettyStream(destination ?? process.stdout) : destination;
  return pino(
    {
      level,
      mixin: requestContextFields,
      hooks: { streamWrite: escapeLine },
      serializers: { err: serializeError },
      base: { service: 'a2a-service' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: [
          'req.headers["x-api-key"]',
          'req.headers.authorization',
          'req.headers.cookie',
          'headers["x-api-key"]',
          'headers.authorization',
          'headers.cookie',
          '*.password',
          '*.key',
          '*.secret',
          '*.token',
          '*.claim_code',
          'password',
          'key',
          'secret',
          'token',
          'claim_code',
        ],
        censor: '[redacted]',
      },
    },
    out,
  );
}

const LEVEL_NAMES: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};
const LEVEL_COLOURS: Record<number, string> = { 10: '90', 20: '36', 30: '32', 40: '33', 50: '31', 60: '35' };
const PLAIN_VALUE = /^[\w.:/@+-]{1,200}$/;

/**
 * The human-readable format (LOG_FORMAT=pretty, or a terminal): one line per entry,
 * `12:00:00.123 WARN  message key=value …`. A small formatter rather than pino-pretty,
 * a development tool whose transport runs in a worker thread: this stays synchronous,
 * in-process and dependency-free. It reads the JSON line pino wrote (already escaped by
 * escapeLine), so every value is printed either plain or as its JSON string — a value
 * can never break the line or start a forged one.
 */
export function formatPretty(line: string, colour = false): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  const { level, time, msg, service: _service, ...fields } = entry;
  const name = (LEVEL_NAMES[Number(level)] ?? String(level)).padEnd(5);
  const when = typeof time === 'string' ? time.slice(11, 23) : '';
  const rendered = Object.entries(fields).map(([key, value]) => `${key}=${prettyValue(value)}`);
  const head = colour ? `\u001b[${LEVEL_COLOURS[Number(level)] ?? '0'}m${name}\u001b[0m` : name;
  return escapeLine(
    `${when} ${head} ${typeof msg === 'string' ? JSON.stringify(msg).slice(1, -1) : ''}${rendered.length ? ` ${rendered.join(' ')}` : ''}`,
  );
}

function prettyValue(value: unknown): string {
  if (typeof value === 'string') {
    return PLAIN_VALUE.test(value) ? value : JSON.stringify(value);
  }
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.every(([, v]) => typeof v !== 'object' || v === null) && entries.length <= 4 && !('stack' in value)) {
      return entries.map(([k, v]) => `${k}:${prettyValue(v)}`).join(',');
    }
  }
  return JSON.stringify(value);
}

function prettyStream(target: DestinationStream | NodeJS.WritableStream): DestinationStream {
  const colour = target === process.stdout && process.stdout.isTTY === true;
  return new Writable({
    write(chunk, _encoding, done) {
      const text = String(chunk)
        .split('\n')
        .filter(Boolean)
        .map((line) => `${formatPretty(line, colour)}\n`)
        .join('');
      target.write(text);
      done();
    },
  });
}

/** The longest console text of a dependency that is logged; the rest is cut. */
const MAX_CONSOLE_TEXT = 2_000;

/**
 * In the server and worker processes nothing but the logger writes to stdout or
 * stderr: what dependencies print with console.* (the A2A SDK warns with request
 * text in it) and process warnings become log entries (`source: "console"` or
 * `"process"`), the text a JSON value like any other — never a raw line.
 */
export function routeConsoleToLogger(logger: Logger): void {
  const child = logger.child({ source: 'console' });
  const to =
    (level: 'debug' | 'info' | 'warn' | 'error') =>
    (...args: unknown[]) => {
      child[level](format(...args).slice(0, MAX_CONSOLE_TEXT));
    };
  Object.assign(console, {
    log: to('info'),
    info: to('info'),
    debug: to('debug'),
    trace: to('debug'),
    warn: to('warn'),
    error: to('error'),
    dir: to('debug'),
  });
  // Node's own handler prints warnings to stderr; the logger takes them instead.
  process.removeAllListeners('warning');
  process.on('warning', (warning) =>
    logger.warn({ source: 'process', type: warning.name }, warning.message.slice(0, MAX_CONSOLE_TEXT)),
  );
}

/**
 * Routes Nest's own log lines into the same JSON stream. Nest's `log` lines (modules
 * initialized, every route mapped) are debug: at info, a start is the one line main.ts
 * prints. A failed start is reported by the entry point that catches it, so Nest's
 * ExceptionHandler line is debug too.
 */
export class JsonLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}
  log(message: unknown, context?: string) {
    this.logger.debug({ context }, String(message));
  }
  error(message: unknown, trace?: string, context?: string) {
    if (context === 'ExceptionHandler' || trace === 'ExceptionHandler') {
      this.logger.debug({ context: 'ExceptionHandler', err: message }, 'start failed');
      return;
    }
    this.logger.error({ context, trace }, String(message));
  }
  warn(message: unknown, context?: string) {
    this.logger.warn({ context }, String(message));
  }
  debug(message: unknown, context?: string) {
    this.logger.debug({ context }, String(message));
  }
  verbose(message: unknown, context?: string) {
    this.logger.trace({ context }, String(message));
  }
}

export function requestLogMiddleware(logger: Logger) {
  return (req: Request, res: Response, next: NextFunction): void => {
    res.on('finish', () => {
      const durationMs = Number(process.hrtime.bigint() - req.startedAt) / 1e6;
      const principal = req.principal;
      logger.info(
        {
          request_id: req.id,
          // 'finish' may fire outside the request's async context: the trace id is the request context's.
          trace_id: requestTraceId(req),
          method: req.method,
          path: req.path,
          status: res.statusCode,
          duration_ms: Math.round(durationMs * 100) / 100,
          principal: principal ? { kind: principal.kind, id: principal.id } : undefined,
        },
        'request',
      );
    });
    next();
  };
}
