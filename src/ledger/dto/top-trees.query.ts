import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, Min, MinLength, MaxLength } from 'class-validator';
import { IsTimestamp } from '../../common/validation';

/** The most trees one answer lists (docs/api.md §18). */
export const MAX_TOP_TREES = 50;

/** `GET /api/v1/usage/trees` (docs/api.md §18). */
export class TopTreesQuery {
  @ApiPropertyOptional({
    format: 'date-time',
    description: 'Trees whose root was created at or after this hour (default: 30 days before `to`).',
  })
  @IsOptional()
  @IsTimestamp()
  from?: string;

  @ApiPropertyOptional({
    format: 'date-time',
    description: 'Trees whose root was created before this time (default: now).',
  })
  @IsOptional()
  @IsTimestamp()
  to?: string;

  @ApiPropertyOptional({ description: "Narrow the caller's side to one identity (handle or id)." })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(63)
  identity?: string;

  @ApiPropertyOptional({ minimum: 1, maximum: MAX_TOP_TREES, default: 10, description: 'Trees listed, largest first.' })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_TOP_TREES)
  limit?: number;
}
