import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { PageOf } from '../common/api-docs';
import { envelopeOf } from './delivery-queue';
import type { DeliveryStatus } from './delivery.entity';
import { EVENT_TYPES, type EventType } from './event-types';
import type { WebhookStatus } from './webhook.entity';
import type { DeliveryRecord, WebhookRecord } from './webhook-records';

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

export function toWebhookView(webhook: WebhookRecord): WebhookView {
  return {
    id: webhook.id,
    organization_id: webhook.organizationId,
    identity: webhook.identityHandle,
    url: webhook.url,
    events: webhook.events,
    description: webhook.description,
    status: webhook.status,
    failing_since: webhook.failingSince?.toISOString() ?? null,
    previous_secret_expires_at:
      webhook.previousSecretExpiresAt && webhook.previousSecretExpiresAt > new Date()
        ? webhook.previousSecretExpiresAt.toISOString()
        : null,
    created_at: webhook.createdAt.toISOString(),
    updated_at: webhook.updatedAt.toISOString(),
  };
}

/** One attempt of a delivery, as recorded. */
export interface AttemptView {
  attempt: number;
  succeeded: boolean;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  /** What the endpoint answered: some headers (never a cookie or credential) and the body's first 1,024 bytes. */
  response: { headers: Record<string, string>; body: string } | null;
  created_at: string;
}

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
  /** The request body every attempt sends (the event envelope); null when its data is over 8 KiB. */
  request_body: string | null;
}

export function toDeliveryView(delivery: DeliveryRecord): DeliveryView {
  return {
    id: delivery.id,
    webhook_id: delivery.webhookId,
    event_id: delivery.eventId,
    event_type: delivery.eventType,
    status: delivery.status,
    attempt_count: delivery.attempts,
    next_attempt_at: delivery.nextAttemptAt?.toISOString() ?? null,
    last_attempt_at: delivery.lastAttemptAt?.toISOString() ?? null,
    last_status_code: delivery.lastStatusCode,
    last_error: delivery.lastError,
    last_duration_ms: delivery.lastDurationMs,
    created_at: delivery.createdAt.toISOString(),
    updated_at: delivery.updatedAt.toISOString(),
    attempts: delivery.recentAttempts.map((a) => ({
      attempt: a.attempt,
      succeeded: a.succeeded,
      status_code: a.statusCode,
      error: a.error,
      duration_ms: a.durationMs,
      response:
        a.responseHeaders === null && a.responseBody === null
          ? null
          : { headers: a.responseHeaders ?? {}, body: a.responseBody ?? '' },
      created_at: new Date(a.createdAt).toISOString(),
    })),
    // As the dispatcher sends it (DeliveryDispatcher.requestFor: the envelope as JSON).
    request_body:
      delivery.eventData === null
        ? null
        : JSON.stringify(
            envelopeOf({
              id: delivery.eventId,
              type: delivery.eventType,
              createdAt: delivery.eventCreatedAt,
              organizationId: delivery.eventOrganizationId,
              data: delivery.eventData,
            }),
          ),
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

@ApiSchema({ name: 'DeliveryResponse' })
class DeliveryResponseSchema {
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    description: 'At most 20 response headers, each value cut to 200 characters; never a cookie or credential header.',
  })
  headers: Record<string, string>;
  @ApiProperty({ description: "The response body's first 1,024 bytes." }) body: string;
}

@ApiSchema({ name: 'DeliveryAttempt' })
export class AttemptSchema implements AttemptView {
  @ApiProperty() attempt: number;
  @ApiProperty() succeeded: boolean;
  @ApiProperty({ type: Number, nullable: true }) status_code: number | null;
  @ApiProperty({ type: String, nullable: true }) error: string | null;
  @ApiProperty() duration_ms: number;
  @ApiProperty({
    type: DeliveryResponseSchema,
    nullable: true,
    description: 'What the endpoint answered; null when nothing did (a timeout, a refused connection).',
  })
  response: { headers: Record<string, string>; body: string } | null;
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
  @ApiProperty({
    type: String,
    nullable: true,
    description:
      'The request body every attempt sends (the signed event envelope); null when its `data` is over 8 KiB (read it with `GET /api/v1/events`).',
  })
  request_body: string | null;
}

export const WebhookPage = PageOf(WebhookSchema, 'webhooks', 'WebhookList');
export const DeliveryPage = PageOf(DeliverySchema, 'deliveries', 'DeliveryList');
