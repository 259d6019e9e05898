import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import type { Organization } from './organization.entity';

/** An organization's settings (docs/api.md §2, key lifetimes; §13, single sign-on). */
export interface OrganizationSettingsView {
  max_key_lifetime_days: number | null;
  password_sign_in: boolean;
  sso_email_domains: string[];
  require_verified_upstream_cards: boolean;
}

export const toOrganizationSettingsView = (
  organization: Organization,
  emailDomains: string[],
): OrganizationSettingsView => ({
  max_key_lifetime_days: organization.maxKeyLifetimeDays,
  password_sign_in: organization.passwordSignIn,
  sso_email_domains: emailDomains,
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

  @ApiProperty({
    description:
      "Whether the organization's members may sign in with a password; false: only with the single sign-on provider.",
  })
  password_sign_in: boolean;

  @ApiProperty({
    type: [String],
    description:
      "Email domains whose people join the organization at their first single sign-on (the provider must have verified the address). Trusted as the organization's administrators set them.",
  })
  sso_email_domains: string[];
  @ApiProperty({ description: 'Whether work is forwarded only to upstreams whose card verified.' })
  require_verified_upstream_cards: boolean;
}
