import { Global, Module } from '@nestjs/common';
import { Metrics } from './metrics';
import { MetricsServer } from './metrics.server';

/** The process's metrics (docs/operations.md, "Metrics"), offered to every module; the listener starts with the application. */
@Global()
@Module({
  providers: [Metrics, MetricsServer],
  exports: [Metrics],
})
export class MetricsModule {}
