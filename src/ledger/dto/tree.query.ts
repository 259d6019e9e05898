import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';

/** The most children shown per node, and nodes per answer (docs/api.md §18). */
export const MAX_TREE_FAN_OUT = 100;
export const MAX_TREE_NODES = 500;

/** `GET /api/v1/tasks/{id}/tree` (docs/api.md §18). */
export class TreeQuery {
  @ApiPropertyOptional({
    minimum: 1,
    maximum: MAX_TREE_FAN_OUT,
    default: 50,
    description: 'Children shown per node, oldest first; a node with more says `children_truncated`.',
  })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_TREE_FAN_OUT)
  fan_out?: number;

  @ApiPropertyOptional({
    minimum: 1,
    description: 'Levels of descendants shown (default: all, up to LEDGER_MAX_TREE_DEPTH).',
  })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1000)
  depth?: number;
}
