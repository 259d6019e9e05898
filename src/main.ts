import 'reflect-metadata';
import { loadConfigOrExit } from './config/config';
import { createLogger, routeConsoleToLogger } from './common/logger';
import { createApp } from './app.factory';
import { exitOnSignals } from './common/shutdown';

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const logger = createLogger(config.logLevel);
  routeConsoleToLogger(logger);
  const app = await createApp(config, logger);
  const server = await app.listen(config.port, config.host);
  server.keepAliveTimeout = 65_000;
  logger.info({ port: config.port, base_url: config.publicBaseUrl }, 'listening');

  exitOnSignals(app, config.shutdownGraceMs, logger);
}

main().catch((error: unknown) => {
  process.stderr.write(`failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
