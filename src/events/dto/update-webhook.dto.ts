import { ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { MAX_URL_LENGTH } from '../address-policy';
import type { WebhookStatus } from '../webhook.entity';
import { EVENT_FILTERS } from './create-webhook.dto';

/** The subscription's identity is fixed at creation; any other field is refused with 400. */
export class UpdateWebhookDto {
  @ApiPropertyOptional({ maxLength: MAX_URL_LENGTH })
  @IsOptional()
  @IsString()
  @MaxLength(MAX_URL_LENGTH)
  url?: string;

  @ApiPropertyOptional({ enum: EVENT_FILTERS, isArray: true })
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(EVENT_FILTERS.length)
  @IsIn(EVENT_FILTERS, {
    each: true,
    message: `events must contain only known event types or "*": ${EVENT_FILTERS.join(', ')}`,
  })
  events?: string[];

  @ApiPropertyOptional({ maxLength: 500 })
  @IsOptional()
  @IsString()
  @MaxLength(500)
  description?: string;

  @ApiPropertyOptional({
    enum: ['active', 'disabled'],
    description: 'Re-enable a webhook that was disabled, or pause one.',
  })
  @IsOptional()
  @IsIn(['active', 'disabled'])
  status?: WebhookStatus;
}
