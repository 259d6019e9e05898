import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import type { Organization } from './organization.entity';

/** An organization's settings (docs/api.md §2, key lifetimes). */
export interface OrganizationSettingsView {
  max_key_lifetime_days: number | null;
  require_verified_upstream_cards: boolean;
}

export const toOrganizationSettingsView = (organization: Organization): OrganizationSettingsView => ({
  max_key_lifetime_days: organization.maxKeyLifetimeDays,
  require_verified_upstream_cards: organization.requireVerifiedUpstreamCards,
});

@ApiSchema({ name: 'OrganizationSettings' })
export class OrganizationSettingsSchema implements OrganizationSettingsView {
  @ApiProperty({
    type: Number,
    nullable: true,
    description: 'The longest lifetime of a new API key, in days; null: no limit.',
  })
  max_key_lifetime_days: number | null;

  @ApiProperty({ description: 'Whether work is forwarded only to upstreams whose card verified.' })
  require_verified_upstream_cards: boolean;
}
