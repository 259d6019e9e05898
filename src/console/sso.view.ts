import { ApiProperty, ApiSchema } from '@nestjs/swagger';

/** Whether the Console offers single sign-on, and with which provider (docs/api.md §13). */
export interface SsoConfigView {
  enabled: boolean;
  provider_name: string | null;
  start_url: string | null;
}

@ApiSchema({ name: 'SsoConfig' })
export class SsoConfigSchema implements SsoConfigView {
  @ApiProperty({ description: 'Whether people can sign in to the Console with the single sign-on provider.' })
  enabled: boolean;

  @ApiProperty({ type: String, nullable: true, description: 'The provider\'s name for the "Sign in with …" button.' })
  provider_name: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Where a browser goes to sign in with the provider (add `?next=/console/…` to land there).',
  })
  start_url: string | null;
}
