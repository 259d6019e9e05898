import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { PageOf } from '../common/api-docs';
import type { Envelope } from './delivery-queue';
import { EVENT_TYPES, type EventType } from './event-types';

// --- OpenAPI schema of an event as the list, the stream and webhooks carry it (envelopeOf, event-feed.ts) ---

@ApiSchema({ name: 'Event' })
export class EventSchema implements Envelope {
  @ApiProperty({
    example: 'evt_01JD2Z6V4S8R0M6Q3X7N5C9B1A',
    description: "The event id (also the stream's `id:`, for `Last-Event-ID`).",
  })
  id: string;
  @ApiProperty({ enum: EVENT_TYPES }) type: EventType;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'uuid' }) organization_id: string;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'What happened; its fields depend on `type`.',
  })
  data: Record<string, unknown>;
}

export const EventPage = PageOf(EventSchema, 'events', 'EventList');
