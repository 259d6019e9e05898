import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { PageOf } from '../common/api-docs';
import type { DeliveryStatus } from './delivery.entity';
import { EVENT_TYPES, type EventType } from './event-types';
import type { WebhookStatus } from './webhook.entity';
import type { AttemptRow, DeliveryRow, WebhookRow } from './webhook-records';

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
    previous_secret_expires_at:
      row.previous_secret_expires_at && row.previous_secret_expires_at > new Date()
        ? row.previous_secret_expires_at.toISOString()
        : null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
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

// --- OpenAPI schemas of the views above (each must list every field its view has) ---

@ApiSchema({ name: 'Webhook' })
export class WebhookSchema implements WebhookView {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) organization_id: string;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The handle of the identity it is scoped to; null for organization-wide.',
  })
  identity: string | null;
  @ApiProperty({ format: 'uri' }) url: string;
  @ApiProperty({ type: [String], description: 'Event types, or `["*"]` for all.', example: ['task.created'] })
  events: string[];
  @ApiProperty() description: string;
  @ApiProperty({ enum: ['active', 'disabled'] }) status: WebhookStatus;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'Start of the current run of failed attempts.',
  })
  failing_since: string | null;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'After a rotation: until when the previous secret also signs.',
  })
  previous_secret_expires_at: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
}

/** A webhook with its signing secret: returned only on creation and rotation. */
@ApiSchema({ name: 'WebhookWithSecret' })
export class WebhookWithSecretSchema extends WebhookSchema {
  @ApiProperty({ example: 'whsec_…', description: 'The signing secret. Shown only in this response; store it now.' })
  secret: string;
}

@ApiSchema({ name: 'DeliveryAttempt' })
export class AttemptSchema implements AttemptView {
  @ApiProperty() attempt: number;
  @ApiProperty() succeeded: boolean;
  @ApiProperty({ type: Number, nullable: true }) status_code: number | null;
  @ApiProperty({ type: String, nullable: true }) error: string | null;
  @ApiProperty() duration_ms: number;
  @ApiProperty({ format: 'date-time' }) created_at: string;
}

@ApiSchema({ name: 'Delivery' })
export class DeliverySchema implements DeliveryView {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) webhook_id: string;
  @ApiProperty() event_id: string;
  @ApiProperty({ enum: EVENT_TYPES }) event_type: EventType;
  @ApiProperty({ enum: ['pending', 'succeeded', 'failed'] }) status: DeliveryStatus;
  @ApiProperty() attempt_count: number;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) next_attempt_at: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) last_attempt_at: string | null;
  @ApiProperty({ type: Number, nullable: true }) last_status_code: number | null;
  @ApiProperty({ type: String, nullable: true }) last_error: string | null;
  @ApiProperty({ type: Number, nullable: true }) last_duration_ms: number | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
  @ApiProperty({ type: [AttemptSchema], description: 'The most recent attempts, oldest first.' })
  attempts: AttemptView[];
}

export const WebhookPage = PageOf(WebhookSchema, 'webhooks', 'WebhookList');
export const DeliveryPage = PageOf(DeliverySchema, 'deliveries', 'DeliveryList');
