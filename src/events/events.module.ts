import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { LimitsModule } from '../limits/limits.module';
import { DeliveryAttempt } from './delivery-attempt.entity';
import { DeliveryDispatcher } from './delivery-dispatcher';
import { DeliveryQueue } from './delivery-queue';
import { DeliverySender, HOST_RESOLVER, systemResolver } from './delivery-sender';
import { Delivery } from './delivery.entity';
import { EventsService } from './events.service';
import { OutboxEvent } from './outbox-event.entity';
import { PushNotifications } from './push-notifications';
import { Webhook } from './webhook.entity';
import { WebhooksController } from './webhooks.controller';
import { WebhooksService } from './webhooks.service';

/**
 * Events: the outbox, webhook subscriptions and the delivery engine. It sits low in
 * the module graph — every module that changes something imports it to emit — so it
 * imports nothing but the database, the rate limits (the ping quota) and the global
 * configuration.
 */
@Module({
  imports: [TypeOrmModule.forFeature([OutboxEvent, Webhook, Delivery, DeliveryAttempt]), LimitsModule],
  controllers: [WebhooksController],
  providers: [
    EventsService, WebhooksService, DeliveryQueue, DeliverySender, DeliveryDispatcher, PushNotifications,
    { provide: HOST_RESOLVER, useValue: systemResolver },
  ],
  exports: [EventsService, PushNotifications],
})
export class EventsModule {}
