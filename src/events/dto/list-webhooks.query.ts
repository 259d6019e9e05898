import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { PageQuery } from '../../common/pagination';
import type { WebhookStatus } from '../webhook.entity';

export class ListWebhooksQuery extends PageQuery {
  @ApiPropertyOptional({ description: 'Handle or id of an identity: only the webhooks scoped to it.' })
  @IsOptional()
  @IsString()
  @MaxLength(63)
  identity?: string;

  @ApiPropertyOptional({ enum: ['active', 'disabled'] })
  @IsOptional()
  @IsIn(['active', 'disabled'])
  status?: WebhookStatus;
}
