import type { LoggerService } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { format } from 'node:util';
import pino, { type DestinationStream, type Logger } from 'pino';

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
  if (!(error instanceof Error)) return { type: typeof error };
  const driver = (error as { driverError?: { code?: unknown } }).driverError;
  if (driver) {
    const frames = error.stack?.split('\n').filter((line) => line.trimStart().startsWith('at ')).join('\n');
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

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino({
    level,
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
  }, destination);
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
  const to = (level: 'debug' | 'info' | 'warn' | 'error') => (...args: unknown[]) => {
    child[level](format(...args).slice(0, MAX_CONSOLE_TEXT));
  };
  Object.assign(console, { log: to('info'), info: to('info'), debug: to('debug'), trace: to('debug'), warn: to('warn'), error: to('error'), dir: to('debug') });
  // Node's own handler prints warnings to stderr; the logger takes them instead.
  process.removeAllListeners('warning');
  process.on('warning', (warning) => logger.warn({ source: 'process', type: warning.name }, warning.message.slice(0, MAX_CONSOLE_TEXT)));
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
