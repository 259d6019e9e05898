import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsInt, IsString, Matches, Max, Min, ValidateIf } from 'class-validator';
import { Nested, Optional } from '../../common/validation';
import { FILTER_MODES, type FilterMode } from '../identity.entity';

/** A decimal string: up to 15 digits before the point, 9 after (docs/api.md §18). */
export const AMOUNT_PATTERN = /^(0|[1-9][0-9]{0,14})(\.[0-9]{1,9})?$/;
/** ISO 4217: three capital letters. */
export const CURRENCY_PATTERN = /^[A-Z]{3}$/;

/** An amount of money, as the reply's `usage.cost` and the monthly budget give it (docs/api.md §18). */
export class MoneyDto {
  @ApiProperty({ example: '12.50', description: 'A decimal string (up to 15 digits, 9 decimals).' })
  @IsString()
  @Matches(AMOUNT_PATTERN, { message: 'amount must be a decimal string such as "12.50"' })
  amount: string;

  @ApiProperty({ example: 'USD', description: 'ISO 4217 currency code.' })
  @IsString()
  @Matches(CURRENCY_PATTERN, { message: 'currency must be an ISO 4217 code such as "USD"' })
  currency: string;
}

/** Present and not null: validated; null clears the setting. */
const Clearable = () => ValidateIf((_, value: unknown) => value !== undefined && value !== null);

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
  @Clearable()
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
  @Clearable()
  @Nested(() => MoneyDto)
  monthly_cost_budget?: MoneyDto | null;
}
