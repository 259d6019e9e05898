import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { ALL_EVENTS, EVENT_TYPES } from '../event-types';
import { MAX_URL_LENGTH } from '../address-policy';

export const EVENT_FILTERS = [ALL_EVENTS, ...EVENT_TYPES] as const;

export class CreateWebhookDto {
  @ApiProperty({ maxLength: MAX_URL_LENGTH, description: 'An https URL on a public address.' })
  @IsString()
  @MaxLength(MAX_URL_LENGTH)
  url: string;

  @ApiProperty({
    enum: EVENT_FILTERS,
    isArray: true,
    description: 'Event types to receive, or `["*"]` for every type.',
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(EVENT_FILTERS.length)
  @IsIn(EVENT_FILTERS, {
    each: true,
    message: `events must contain only known event types or "*": ${EVENT_FILTERS.join(', ')}`,
  })
  events: string[];

  @ApiPropertyOptional({
    description:
      'Handle or id of one identity of your organization: only events about it. Omitted: organization-wide (an agent key always subscribes for its own identity).',
  })
  @IsOptional()
  @IsString()
  @MaxLength(63)
  identity?: string;

  @ApiPropertyOptional({ maxLength: 500 })
  @IsOptional()
  @IsString()
  @MaxLength(500)
  description?: string;
}
