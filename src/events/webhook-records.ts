import type { RecordOf } from '../database/row';
import type { DeliveryAttempt } from './delivery-attempt.entity';
import type { Delivery } from './delivery.entity';
import type { EventType } from './event-types';
import type { Webhook } from './webhook.entity';

// The webhooks and deliveries as the events repositories hand them to services
// (camelCase records); the views (webhook.view.ts) are made from these at the edge.

/** A webhook as its read query gives it (WebhooksRepository's webhook read model). Never carries the secret. */
export type WebhookRecord = Pick<
  RecordOf<Webhook>,
  | 'id'
  | 'organizationId'
  | 'identityId'
  | 'url'
  | 'events'
  | 'description'
  | 'status'
  | 'failingSince'
  | 'previousSecretExpiresAt'
  | 'createdAt'
  | 'updatedAt'
> & { identityHandle: string | null };

/** A delivery as its read query gives it (DeliveriesRepository's SELECT_DELIVERY): a webhook's delivery, so both ids are set. */
export type DeliveryRecord = Pick<
  RecordOf<Delivery>,
  | 'id'
  | 'status'
  | 'attempts'
  | 'nextAttemptAt'
  | 'lastAttemptAt'
  | 'lastStatusCode'
  | 'lastError'
  | 'lastDurationMs'
  | 'createdAt'
  | 'updatedAt'
> & {
  webhookId: string;
  eventId: string;
  eventType: EventType;
  /** The most recent attempts, oldest first, as json_agg gives them (timestamps as text). */
  recentAttempts: AttemptRecord[];
  eventCreatedAt: Date;
  eventOrganizationId: string;
  /** The event's data, when small enough to show (DeliveriesRepository); null otherwise. */
  eventData: Record<string, unknown> | null;
};

/** An attempt as json_agg gives it: a delivery_attempts row, its timestamp as text. */
export type AttemptRecord = Pick<
  RecordOf<DeliveryAttempt>,
  'attempt' | 'succeeded' | 'statusCode' | 'error' | 'durationMs' | 'responseHeaders' | 'responseBody'
> & { createdAt: string };
