import { ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsBoolean, IsInt, IsOptional, Max, Min, ValidateBy } from 'class-validator';
import { Optional } from '../../common/validation';
import { normalizeDomain } from '../email-domains';

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
      "Whether the organization's members may sign in with a password (and accept invitations with one). `false` needs single sign-on configured on the service (409 `sso_not_configured`); sessions already open stay.",
  })
  @Optional()
  @IsBoolean()
  password_sign_in?: boolean;

  @ApiPropertyOptional({
    type: [String],
    maxItems: 20,
    description:
      'The email domains (e.g. `acme.example`) whose people join the organization at their first single sign-on, replacing the list. A domain belongs to one organization (409 `email_domain_taken`). The service trusts the administrators who set it: set only domains your organization controls.',
  })
  @Optional()
  @IsArray()
  @ArrayMaxSize(20)
  @ValidateBy(
    {
      name: 'isEmailDomain',
      validator: {
        // The rule the domain is stored by (normalizeDomain), so what passes here is stored as it is checked.
        validate: (value: unknown) => typeof value === 'string' && normalizeDomain(value) !== null,
        defaultMessage: () => 'each value of sso_email_domains must be a domain name such as acme.example',
      },
    },
    { each: true },
  )
  sso_email_domains?: string[];

  @ApiPropertyOptional({
    description:
      'Forward work only to upstreams whose Agent Card verified against the keys pinned for them (docs/api.md §14): a task for an upstream whose card is unsigned, failed or unchecked fails instead.',
  })
  @Optional()
  @IsBoolean()
  require_verified_upstream_cards?: boolean;
}
