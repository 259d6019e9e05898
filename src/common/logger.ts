import type { LoggerService } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
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

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino({
    level,
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
