import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';

/** The longest window the overview covers: a week of hours. */
export const OVERVIEW_MAX_HOURS = 168;

export class OverviewQuery {
  @ApiPropertyOptional({
    minimum: 1,
    maximum: OVERVIEW_MAX_HOURS,
    default: 24,
    description: 'How many hours the figures cover, ending with the current hour.',
  })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(OVERVIEW_MAX_HOURS)
  hours?: number;
}
