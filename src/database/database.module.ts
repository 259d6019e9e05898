import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { Logger } from 'pino';
import type { AppConfig } from '../config/config';
import { dataSourceOptions, isEmbedded } from './data-source';
import { describeDatabase } from './database-errors';
import { Database } from './database';
import { runMigrations } from './migrate';

/** Connects (PostgreSQL or embedded PGlite), applies pending migrations at start, and offers Database (how repositories run statements). */
@Module({})
export class DatabaseModule {
  static forRoot(config: AppConfig, logger: Logger): DynamicModule {
    return {
      module: DatabaseModule,
      global: true,
      // DATABASE_PIPELINE, read once: how a transaction's statements go (DatabaseOptions).
      providers: [
        {
          provide: Database,
          useFactory: (dataSource: DataSource) => new Database(dataSource, { pipeline: config.databasePipeline }),
          inject: [DataSource],
        },
      ],
      exports: [Database],
      imports: [
        TypeOrmModule.forRootAsync({
          // No retries: a database that is missing or unreachable at start is reported in one
          // line by the entry point (database-errors.ts), and the process exits at once.
          useFactory: () => ({ ...dataSourceOptions(config), autoLoadEntities: true, toRetry: () => false }),
          dataSourceFactory: async (options) => {
            const dataSource = await new DataSource(options!).initialize();
            if (config.migrationsRun) {
              const applied = await runMigrations(dataSource, isEmbedded(config));
              if (applied.length > 0) {
                logger.info({ migrations: applied }, 'migrations applied');
              }
            }
            logger.debug({ database: describeDatabase(config) }, 'database ready');
            return dataSource;
          },
        }),
      ],
    };
  }
}
