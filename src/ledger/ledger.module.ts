import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { Logger } from 'pino';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { isEmbedded } from '../database/data-source';
import { LOGGER } from '../common/tokens';
import { EventsModule } from '../events/events.module';
import { ContextsController } from './contexts.controller';
import { Artifact } from './entities/artifact.entity';
import { TaskContext } from './entities/context.entity';
import { IdempotencyKey } from './entities/idempotency-key.entity';
import { PushNotificationConfig } from './entities/push-notification-config.entity';
import { TaskEvent } from './entities/task-event.entity';
import { TaskMessage } from './entities/task-message.entity';
import { Task } from './entities/task.entity';
import { IdempotencyStore } from './idempotency';
import { LedgerEvents } from './ledger-events';
import { LedgerService } from './ledger.service';
import { PushConfigService } from './push-configs.service';
import { LocalTaskNotifier, PgTaskNotifier, TaskNotifier } from './task-notifier';
import { TasksController } from './tasks.controller';
import { TasksService } from './tasks.service';

/**
 * Tasks, messages, contexts, artifacts and their events; the REST reads and the
 * worker's reply; wake-ups across instances. The protocol module builds on
 * LedgerService and PushConfigService; this module never imports the protocol.
 */
@Module({
  imports: [TypeOrmModule.forFeature([TaskContext, Task, TaskMessage, Artifact, TaskEvent, PushNotificationConfig, IdempotencyKey]), EventsModule],
  controllers: [TasksController, ContextsController],
  providers: [
    LedgerService,
    LedgerEvents,
    PushConfigService,
    TasksService,
    IdempotencyStore,
    {
      provide: TaskNotifier,
      inject: [APP_CONFIG, LOGGER],
      // One process on the embedded database: an in-process bus. On PostgreSQL: LISTEN/NOTIFY.
      useFactory: (config: AppConfig, logger: Logger) =>
        isEmbedded(config) ? new LocalTaskNotifier() : new PgTaskNotifier(config.databaseUrl!, logger),
    },
  ],
  exports: [LedgerService, PushConfigService, TaskNotifier],
})
export class LedgerModule {}
