import { DynamicModule, Global, Module } from '@nestjs/common';
import type { Logger } from 'pino';
import { LOGGER } from '../common/tokens';
import { APP_CONFIG, type AppConfig } from './config';

/** Provides the validated configuration and the logger to every module. */
@Global()
@Module({})
export class ConfigModule {
  static forRoot(config: AppConfig, logger: Logger): DynamicModule {
    return {
      module: ConfigModule,
      providers: [
        { provide: APP_CONFIG, useValue: config },
        { provide: LOGGER, useValue: logger },
      ],
      exports: [APP_CONFIG, LOGGER],
    };
  }
}
