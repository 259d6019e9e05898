import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Logger } from 'pino';
import { AppModule } from './app.module';
import type { AppConfig } from './config/config';
import { jsonBodyParser } from './common/body-parsers';
import { ExpressServerAdapter } from './common/express-server';
import { JsonLogger, requestLogMiddleware } from './common/logger';
import { setupOpenApi } from './common/openapi';
import { ProblemFilter } from './common/problem.filter';
import { requestContextMiddleware, requestIdMiddleware } from './common/request-context';
import { createValidationPipe } from './common/validation';
import { AuthService } from './auth/auth.service';
import { earlyKeyCheck } from './auth/early-key-check';
import { consoleStaticMiddleware, rootToConsole } from './console/console-static';
import { httpTracing } from './tracing/tracing';
import { httpMetricsMiddleware } from './metrics/http-metrics';
import { Metrics } from './metrics/metrics';

/** Builds the whole application; used by main.ts, the CLI-free tests and benchmarks. */
export async function createApp(config: AppConfig, logger: Logger): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(
    AppModule.forRoot(config, logger),
    ExpressServerAdapter.choose(config.expressServerAdapter),
    {
      bodyParser: false,
      abortOnError: false, // a failed start is reported by the caller, not by process.abort()
      logger: new JsonLogger(logger),
    },
  );
  app.set('trust proxy', config.trustProxy);
  app.disable('x-powered-by');
  // No automatic weak ETag on every response (a hash of each body); Agent Cards set their own.
  app.set('etag', false);
  app.use(httpTracing);
  app.use(requestIdMiddleware);
  app.use(requestLogMiddleware(logger));
  app.use(httpMetricsMiddleware(app.get(Metrics)));
  app.use('/console', consoleStaticMiddleware(config.consoleDir, config.publicBaseUrl));
  app.use(rootToConsole);
  app.use(earlyKeyCheck(app.get(AuthService)));
  app.use(jsonBodyParser({ rest: config.bodyLimitBytes, protocol: config.protocolBodyLimitBytes }));
  app.use(requestContextMiddleware); // back in the request's log context after the body parser's stream callbacks
  app.useGlobalPipes(createValidationPipe());
  app.useGlobalFilters(new ProblemFilter(logger));
  setupOpenApi(app, config.publicBaseUrl);
  return app;
}
