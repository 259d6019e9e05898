import { DynamicModule, Global, Module } from '@nestjs/common';
import type { Logger } from 'pino';
import { LOGGER } from './tokens';

/** Provides the process's pino logger (LOGGER) to every module. */
@Global()
@Module({})
export class LoggerModule {
  static forRoot(logger: Logger): DynamicModule {
    return {
      module: LoggerModule,
      providers: [{ provide: LOGGER, useValue: logger }],
      exports: [LOGGER],
    };
  }
}
