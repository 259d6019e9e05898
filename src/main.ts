import 'reflect-metadata';
import { ConfigError, loadConfig, type AppConfig } from './config/config';
import { createLogger } from './common/logger';
import { createApp } from './app.factory';

async function main(): Promise<void> {
  let config: AppConfig;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`configuration error: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  const logger = createLogger(config.logLevel);
  const app = await createApp(config, logger);
  const server = await app.listen(config.port, config.host);
  server.keepAliveTimeout = 65_000;
  logger.info({ port: config.port, base_url: config.publicBaseUrl }, 'listening');

  // Graceful shutdown: stop accepting connections, let in-flight requests finish,
  // run every module's shutdown hook (flushes, database), then exit.
  let stopping = false;
  const shutdown = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const deadline = setTimeout(() => {
      logger.error({ grace_ms: config.shutdownGraceMs }, 'shutdown took too long; exiting');
      process.exit(1);
    }, config.shutdownGraceMs);
    deadline.unref();
    app.close().then(
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

main().catch((error: unknown) => {
  process.stderr.write(`failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
