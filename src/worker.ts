import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module';
import { createLogger, JsonLogger, routeConsoleToLogger } from './common/logger';
import { exitOnSignals } from './common/shutdown';
import { loadConfigOrExit, type AppConfig } from './config/config';
import { explainConnectionError } from './database/database-errors';
import { startTracing } from './tracing/tracing';

/**
 * `npm run worker` (or `node dist/worker.js`): a process that only delivers events —
 * webhooks and push notifications — with no HTTP server. Run any number of them on
 * the server's PostgreSQL, beside servers started with EVENTS_DISPATCHER=off (or
 * inline: every dispatcher shares one queue and never sends the same attempt twice).
 */
async function main(): Promise<void> {
  const loaded = loadConfigOrExit();
  if (!loaded.databaseUrl) {
    process.stderr.write(
      'configuration error: DATABASE_URL is required; the embedded database belongs to the server process\n',
    );
    process.exit(1);
  }
  // The worker serves no protocol: no gRPC server beside the HTTP server's.
  const config: AppConfig = {
    ...loaded,
    grpcPort: null,
    grpcPublicAddress: null,
    events: { ...loaded.events, dispatcher: 'inline' },
  };
  const logger = createLogger(config.logLevel, undefined, config.logFormat);
  routeConsoleToLogger(logger);
  // Before Nest starts: deliveries continue the traces stored with their events; log lines carry their trace ids.
  const tracing = startTracing(config.tracing);
  const app = await NestFactory.createApplicationContext(AppModule.forRoot(config, logger), {
    logger: new JsonLogger(logger),
    abortOnError: false,
  }).catch((error: unknown) => {
    throw new Error(explainConnectionError(error, config) ?? (error instanceof Error ? error.message : String(error)));
  });
  logger.info(
    { poll_interval_ms: config.events.pollIntervalMs, batch_size: config.events.batchSize },
    'event worker started',
  );
  exitOnSignals(app, config.shutdownGraceMs, logger, () => tracing.shutdown());
}

main().catch((error: unknown) => {
  process.stderr.write(`failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
