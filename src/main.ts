import 'reflect-metadata';
import { loadConfigOrExit, type AppConfig } from './config/config';
import { createLogger, routeConsoleToLogger } from './common/logger';
import { createApp } from './app.factory';
import { exitOnSignals } from './common/shutdown';
import { describeDatabase, explainConnectionError } from './database/database-errors';
import { startTracing } from './tracing/tracing';

async function main(config: AppConfig): Promise<void> {
  const logger = createLogger(config.logLevel, undefined, config.logFormat);
  routeConsoleToLogger(logger);
  // Before Nest starts: every span of the application goes to OTEL_EXPORTER_OTLP_ENDPOINT (none without it);
  // log lines then carry the active span's trace id.
  const tracing = startTracing(config.tracing);
  const app = await createApp(config, logger);
  const server = await app.listen(config.port, config.host);
  server.keepAliveTimeout = 65_000;
  const listen = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`;
  const urls = {
    console_url: `${config.publicBaseUrl}/console/`,
    docs_url: `${config.publicBaseUrl}/api/docs`,
    database: describeDatabase(config),
  };
  logger.info(
    { listen, base_url: config.publicBaseUrl, ...urls },
    `listening on ${listen} — Console ${urls.console_url} — API docs ${urls.docs_url} — database: ${urls.database}`,
  );

  exitOnSignals(app, config.shutdownGraceMs, logger, () => tracing.shutdown());
}

const config = loadConfigOrExit();
main(config).catch((error: unknown) => {
  const reason = explainConnectionError(error, config) ?? (error instanceof Error ? error.message : String(error));
  process.stderr.write(`failed to start: ${reason}\n`);
  process.exit(1);
});
