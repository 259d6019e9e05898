import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { EventsModule } from '../events/events.module';
import { ContextsController } from './contexts.controller';
import { Artifact } from './entities/artifact.entity';
import { TaskContext } from './entities/context.entity';
import { IdempotencyKey } from './entities/idempotency-key.entity';
import { PushNotificationConfig } from './entities/push-notification-config.entity';
import { TaskEvent } from './entities/task-event.entity';
import { TaskMessage } from './entities/task-message.entity';
import { Task } from './entities/task.entity';
import { ForwardedTasksService } from './forwarded-tasks.service';
import { IdempotencyStore } from './idempotency';
import { IdempotencyRepository } from './idempotency.repository';
import { LedgerEvents } from './ledger-events';
import { LedgerRepository } from './ledger.repository';
import { UsageModule } from '../usage/usage.module';
import { TaskTreeRepository } from './task-tree.repository';
import { TaskTreeService } from './task-tree.service';
import { LedgerService } from './ledger.service';
import { PushConfigsRepository } from './push-configs.repository';
import { PushConfigService } from './push-configs.service';
import { TaskActivityRepository } from './task-activity.repository';
import { TaskReadsRepository } from './task-reads.repository';
import { TasksController } from './tasks.controller';
import { TasksService } from './tasks.service';
import { TopTreesController } from './top-trees.controller';

/**
 * Tasks, messages, contexts, artifacts and their events; the REST reads and the
 * worker's reply; wake-ups across instances. The protocol module builds on
 * LedgerService and PushConfigService, the upstream forwarder on ForwardedTasksService;
 * this module never imports either.
 */
@Module({
  imports: [
    TypeOrmModule.forFeature([
      TaskContext,
      Task,
      TaskMessage,
      Artifact,
      TaskEvent,
      PushNotificationConfig,
      IdempotencyKey,
    ]),
    EventsModule,
    UsageModule,
  ],
  controllers: [TasksController, ContextsController, TopTreesController],
  providers: [
    LedgerRepository,
    TaskReadsRepository,
    TaskTreeRepository,
    TaskTreeService,
    TaskActivityRepository,
    PushConfigsRepository,
    IdempotencyRepository,
    LedgerService,
    ForwardedTasksService,
    LedgerEvents,
    PushConfigService,
    TasksService,
    IdempotencyStore,
    // TaskNotifier comes from EventsModule: one listening connection per instance serves tasks and the event stream.
  ],
  exports: [LedgerService, ForwardedTasksService, PushConfigService, LedgerRepository, TaskActivityRepository],
})
export class LedgerModule {}
