import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { LimitsModule } from '../limits/limits.module';
import type { Logger } from 'pino';
import { LOGGER } from '../common/tokens';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { isEmbedded } from '../database/data-source';
import { LocalTaskNotifier, PgTaskNotifier, TaskNotifier } from './task-notifier';
import { DeliveryAttempt } from './delivery-attempt.entity';
import { DeliveryDispatcher } from './delivery-dispatcher';
import { DeliveryQueue } from './delivery-queue';
import { EventFeed } from './event-feed';
import { DeliverySender, HOST_RESOLVER, systemResolver } from './delivery-sender';
import { Delivery } from './delivery.entity';
import { EventsService } from './events.service';
import { DeliveriesRepository } from './deliveries.repository';
import { OutboxEvent } from './outbox-event.entity';
import { OutboxRepository } from './outbox.repository';
import { PushNotifications } from './push-notifications';
import { Webhook } from './webhook.entity';
import { WebhooksController } from './webhooks.controller';
import { WebhooksRepository } from './webhooks.repository';
import { WebhooksService } from './webhooks.service';

/**
 * Events: the outbox, webhook subscriptions and the delivery engine. It sits low in
 * the module graph — every module that changes something imports it to emit — so it
 * imports nothing but the database, the rate limits (the ping quota) and the global
 * configuration. It also provides
 * the wake-ups (TaskNotifier: one listening connection per instance, shared by the
 * ledger's tasks and the event stream) and the outbox's reads in commit order
 * (EventFeed, for the event stream module).
 */
@Module({
  imports: [TypeOrmModule.forFeature([OutboxEvent, Webhook, Delivery, DeliveryAttempt]), LimitsModule],
  controllers: [WebhooksController],
  providers: [
    OutboxRepository,
    DeliveriesRepository,
    WebhooksRepository,
    EventsService,
    WebhooksService,
    DeliveryQueue,
    DeliverySender,
    DeliveryDispatcher,
    PushNotifications,
    EventFeed,
    { provide: HOST_RESOLVER, useValue: systemResolver },
    {
      provide: TaskNotifier,
      inject: [APP_CONFIG, LOGGER],
      // One process on the embedded database: an in-process bus. On PostgreSQL: LISTEN/NOTIFY.
      useFactory: (config: AppConfig, logger: Logger) =>
        isEmbedded(config) ? new LocalTaskNotifier() : new PgTaskNotifier(config.databaseUrl!, logger),
    },
  ],
  exports: [
    OutboxRepository,
    DeliveriesRepository,
    WebhooksRepository,
    EventsService,
    PushNotifications,
    EventFeed,
    TaskNotifier,
  ],
})
export class EventsModule {}
