import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, MaxLength, MinLength } from 'class-validator';
import { IsTimestamp } from '../../common/validation';

export const USAGE_GROUPS = ['identity', 'peer', 'organization', 'day', 'hour'] as const;

/** `GET /api/v1/usage` (docs/api.md §18). */
export class UsageQuery {
  @ApiPropertyOptional({ enum: USAGE_GROUPS, default: 'day' })
  @IsOptional()
  @IsIn(USAGE_GROUPS)
  group_by?: (typeof USAGE_GROUPS)[number];

  @ApiPropertyOptional({
    format: 'date-time',
    description: 'Tasks created at or after this hour (default: 30 days before `to`).',
  })
  @IsOptional()
  @IsTimestamp()
  from?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'Tasks created before this time (default: now).' })
  @IsOptional()
  @IsTimestamp()
  to?: string;

  @ApiPropertyOptional({ description: "One identity's usage (a handle of your organization; an agent key: its own)." })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(63)
  identity?: string;

  @ApiPropertyOptional({
    enum: ['json', 'csv'],
    description: 'csv: the same rows as text/csv (or send `Accept: text/csv`).',
  })
  @IsOptional()
  @IsIn(['json', 'csv'])
  format?: 'json' | 'csv';
}
