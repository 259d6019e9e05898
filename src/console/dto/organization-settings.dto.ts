import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsInt, IsOptional, Max, Min } from 'class-validator';
import { Optional } from '../../common/validation';

/** `PATCH /api/v1/organization/settings`: each field given is set; `null` clears it. */
export class UpdateOrganizationSettingsDto {
  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    minimum: 1,
    maximum: 3650,
    description:
      'The longest lifetime of a new API key, in days: a key minted without `expires_at` expires this long after its creation, and a later `expires_at` is refused. `null`: no limit. Keys minted before keep their expiry.',
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(3650)
  max_key_lifetime_days?: number | null;

  @ApiPropertyOptional({
    description:
      'Forward work only to upstreams whose Agent Card verified against the keys pinned for them (docs/api.md §14): a task for an upstream whose card is unsigned, failed or unchecked fails instead.',
  })
  @Optional()
  @IsBoolean()
  require_verified_upstream_cards?: boolean;
}
