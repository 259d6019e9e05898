import type { DeliveryStatus } from './delivery.entity';
import type { EventType } from './event-types';
import type { WebhookStatus } from './webhook.entity';

/** One row of the webhook read query (WebhooksService.SELECT_WEBHOOK). Never carries the secret. */
export interface WebhookRow {
  id: string;
  organization_id: string;
  identity_id: string | null;
  identity_handle: string | null;
  url: string;
  events: string[];
  description: string;
  status: WebhookStatus;
  failing_since: Date | null;
  previous_secret_expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** A webhook subscription as every read returns it. The secret is shown only on creation and rotation. */
export interface WebhookView {
  id: string;
  organization_id: string;
  /** The handle of the identity it is scoped to; null for organization-wide. */
  identity: string | null;
  url: string;
  events: string[];
  description: string;
  status: WebhookStatus;
  /** Start of the current run of failed attempts; null when the last attempt succeeded. */
  failing_since: string | null;
  /** After a rotation: until when the previous secret also signs. */
  previous_secret_expires_at: string | null;
  created_at: string;
  updated_at: string;
}

export function toWebhookView(row: WebhookRow): WebhookView {
  return {
    id: row.id,
    organization_id: row.organization_id,
    identity: row.identity_handle,
    url: row.url,
    events: row.events,
    description: row.description,
    status: row.status,
    failing_since: row.failing_since?.toISOString() ?? null,
    previous_secret_expires_at: row.previous_secret_expires_at && row.previous_secret_expires_at > new Date()
      ? row.previous_secret_expires_at.toISOString()
      : null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** One row of the delivery read query (WebhooksService.SELECT_DELIVERY). */
export interface DeliveryRow {
  id: string;
  webhook_id: string;
  event_id: string;
  event_type: EventType;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: Date | null;
  last_attempt_at: Date | null;
  last_status_code: number | null;
  last_error: string | null;
  last_duration_ms: number | null;
  created_at: Date;
  updated_at: Date;
  /** The most recent attempts, oldest first, as json_agg gives them (timestamps as text). */
  recent_attempts: AttemptRow[];
}

export interface AttemptRow {
  attempt: number;
  succeeded: boolean;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  created_at: string;
}

/** An attempt is shown as recorded. */
export type AttemptView = AttemptRow;

export interface DeliveryView {
  id: string;
  webhook_id: string;
  event_id: string;
  event_type: EventType;
  status: DeliveryStatus;
  attempt_count: number;
  /** When a pending delivery is next attempted; null once it has succeeded or failed. */
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  last_duration_ms: number | null;
  created_at: string;
  updated_at: string;
  /** The most recent attempts, oldest first. */
  attempts: AttemptView[];
}

export function toDeliveryView(row: DeliveryRow): DeliveryView {
  return {
    id: row.id,
    webhook_id: row.webhook_id,
    event_id: row.event_id,
    event_type: row.event_type,
    status: row.status,
    attempt_count: row.attempts,
    next_attempt_at: row.next_attempt_at?.toISOString() ?? null,
    last_attempt_at: row.last_attempt_at?.toISOString() ?? null,
    last_status_code: row.last_status_code,
    last_error: row.last_error,
    last_duration_ms: row.last_duration_ms,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    attempts: row.recent_attempts.map((a) => ({
      attempt: a.attempt,
      succeeded: a.succeeded,
      status_code: a.status_code,
      error: a.error,
      duration_ms: a.duration_ms,
      created_at: new Date(a.created_at).toISOString(),
    })),
  };
}
