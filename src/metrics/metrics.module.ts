import { Global, Module } from '@nestjs/common';
import { Metrics } from './metrics';
import { MetricsServer } from './metrics.server';

/** The process's metrics (CONTRACT §15), offered to every module; the listener starts with the application. */
@Global()
@Module({
  providers: [Metrics, MetricsServer],
  exports: [Metrics],
})
export class MetricsModule {}
