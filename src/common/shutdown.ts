import type { INestApplicationContext } from '@nestjs/common';
import type { Logger } from 'pino';

/**
 * Graceful shutdown on SIGTERM or SIGINT: close the application (an HTTP server stops
 * accepting and lets in-flight requests finish; every module's shutdown hook runs —
 * flushes, event deliveries in flight, the database), then exit. A shutdown that takes
 * longer than `graceMs` exits with status 1. `flush` runs after the close (the tracing
 * exporter's last spans).
 */
export function exitOnSignals(
  app: INestApplicationContext,
  graceMs: number,
  logger: Logger,
  flush?: () => Promise<void>,
): void {
  let stopping = false;
  const shutdown = (signal: NodeJS.Signals) => {
    if (stopping) {
      return;
    }
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const deadline = setTimeout(() => {
      logger.error({ grace_ms: graceMs }, 'shutdown took too long; exiting');
      process.exit(1);
    }, graceMs);
    deadline.unref();
    app
      .close()
      .then(async () => {
        await flush?.().catch((error: unknown) => logger.warn({ err: error }, 'could not export the last spans'));
      })
      .then(
        () => process.exit(0),
        (error: unknown) => {
          logger.error({ err: error }, 'error during shutdown');
          process.exit(1);
        },
      );
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
}
