import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsInt, IsOptional, Max, Min } from 'class-validator';
import { MoneyDto } from '../../common/money';
import { Nested, Optional } from '../../common/validation';
import { FILTER_MODES, type FilterMode } from '../identity.entity';

/**
 * `PATCH /api/v1/identities/{handle}/settings`. Who may change which field is the
 * table of docs/api.md §3 (OWN_KEY_MAY_CHANGE in src/auth/access.ts).
 */
export class UpdateSettingsDto {
  @ApiPropertyOptional({ description: 'Receiver enabled: the card is served and the protocol endpoint answers.' })
  @Optional()
  @IsBoolean()
  enabled?: boolean;

  @ApiPropertyOptional()
  @Optional()
  @IsBoolean()
  allow_public_egress?: boolean;

  @ApiPropertyOptional({ description: 'Admin key or Console only.' })
  @Optional()
  @IsBoolean()
  publicly_discoverable?: boolean;

  @ApiPropertyOptional({ enum: FILTER_MODES, description: 'Admin key or Console only.' })
  @Optional()
  @IsIn(FILTER_MODES)
  filter_mode?: FilterMode;

  @ApiPropertyOptional({
    description:
      'Every message sent to the identity must name a skill of its card (docs/api.md §16); one that names none is invalid params. Admin key or Console only.',
  })
  @Optional()
  @IsBoolean()
  require_skill?: boolean;

  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    minimum: 1,
    maximum: 10_000_000,
    description:
      'Tasks the identity may start as a requester per UTC day (docs/api.md §18); null: no quota. Admin key or Console only.',
  })
  @IsOptional() // null clears it
  @IsInt()
  @Min(1)
  @Max(10_000_000)
  daily_task_quota?: number | null;

  @ApiPropertyOptional({
    type: MoneyDto,
    nullable: true,
    description:
      'Reported cost the identity may incur as a requester per UTC month (docs/api.md §18); null: no budget. Admin key or Console only.',
  })
  @IsOptional() // null clears it
  @Nested(() => MoneyDto)
  monthly_cost_budget?: MoneyDto | null;
}
