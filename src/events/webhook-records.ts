import type { RowOf } from '../database/row';
import type { DeliveryAttempt } from './delivery-attempt.entity';
import type { Delivery } from './delivery.entity';
import type { EventType } from './event-types';
import type { Webhook } from './webhook.entity';

// The webhook and delivery rows as the events repositories read them; the views
// (webhook.view.ts) are made from these at the edge.

/** One row of the webhook read query (WebhooksRepository's webhook read model). Never carries the secret. */
export type WebhookRow = Pick<
  RowOf<Webhook>,
  | 'id'
  | 'organization_id'
  | 'identity_id'
  | 'url'
  | 'events'
  | 'description'
  | 'status'
  | 'failing_since'
  | 'previous_secret_expires_at'
  | 'created_at'
  | 'updated_at'
> & { identity_handle: string | null };

/** One row of the delivery read query (DeliveriesRepository's SELECT_DELIVERY): a webhook's delivery, so both ids are set. */
export type DeliveryRow = Pick<
  RowOf<Delivery>,
  | 'id'
  | 'status'
  | 'attempts'
  | 'next_attempt_at'
  | 'last_attempt_at'
  | 'last_status_code'
  | 'last_error'
  | 'last_duration_ms'
  | 'created_at'
  | 'updated_at'
> & {
  webhook_id: string;
  event_id: string;
  event_type: EventType;
  /** The most recent attempts, oldest first, as json_agg gives them (timestamps as text). */
  recent_attempts: AttemptRow[];
};

/** An attempt as json_agg gives it: a delivery_attempts row, its timestamp as text. */
export type AttemptRow = Pick<
  RowOf<DeliveryAttempt>,
  'attempt' | 'succeeded' | 'status_code' | 'error' | 'duration_ms'
> & { created_at: string };
