import { ApiPropertyOptional, IntersectionType } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, IsIn, IsOptional, Matches } from 'class-validator';
import { PageQuery } from '../../common/pagination';
import { EVENT_TYPES, type EventType } from '../../events/event-types';

const EVENT_ID = /^evt_[0-9A-Z]{26}$/;

/** `type=task.created` or `type=task.created,task.status`. */
const TypeList = () =>
  Transform(({ value }) => (typeof value === 'string' ? value.split(',').map((part) => part.trim()) : value));

/** The filters the list and the stream share. */
export class StreamEventsQuery {
  @ApiPropertyOptional({
    description: 'Only these event types (comma-separated).',
    example: 'task.created,task.status',
  })
  @IsOptional()
  @TypeList()
  @ArrayMaxSize(EVENT_TYPES.length)
  @IsIn(EVENT_TYPES, { each: true })
  type?: EventType[];

  @ApiPropertyOptional({
    description:
      'Only events that came after this event id (in commit order). On the stream, `Last-Event-ID` takes precedence.',
    pattern: EVENT_ID.source,
  })
  @IsOptional()
  @Matches(EVENT_ID, { message: 'after must be an event id (evt_…)' })
  after?: string;
}

/** The list: the same filters, paged. */
export class ListEventsQuery extends IntersectionType(PageQuery, StreamEventsQuery) {}

export const isEventId = (value: string) => EVENT_ID.test(value);
