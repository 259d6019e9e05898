import { Module } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { OpenCalls } from './open-calls';
import { RateLimitService } from './rate-limit.service';

@Module({
  providers: [
    RateLimitService,
    // One count per process, shared by every call that stays open (protocol streams and blocking sends, event streams).
    {
      provide: OpenCalls,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => new OpenCalls(config.protocolMaxOpenCallsPerKey),
    },
  ],
  exports: [RateLimitService, OpenCalls],
})
export class LimitsModule {}
