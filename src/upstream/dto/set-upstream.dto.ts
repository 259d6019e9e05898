import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsObject, IsString, Length, Matches, MaxLength, ValidateIf } from 'class-validator';
import { Nested, Optional } from '../../common/validation';
import { MAX_URL_LENGTH } from '../../events/address-policy';

export const UPSTREAM_VERSIONS = ['1.0', '0.3'] as const;
export type UpstreamVersion = (typeof UPSTREAM_VERSIONS)[number];
export const UPSTREAM_BINDINGS = ['JSONRPC', 'HTTP+JSON', 'GRPC'] as const;
export type UpstreamBinding = (typeof UPSTREAM_BINDINGS)[number];
export const UPSTREAM_AUTH_TYPES = ['none', 'bearer', 'api_key'] as const;

export class UpstreamAuthDto {
  @ApiProperty({ enum: UPSTREAM_AUTH_TYPES })
  @IsIn(UPSTREAM_AUTH_TYPES)
  type: (typeof UPSTREAM_AUTH_TYPES)[number];

  @ApiPropertyOptional({
    description: 'For `api_key`: the header that carries it (for example X-API-Key).',
    maxLength: 100,
  })
  @ValidateIf((auth: UpstreamAuthDto) => auth.type === 'api_key' || auth.header !== undefined)
  @IsString()
  @Matches(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$/, { message: 'header must be an HTTP header name' })
  header?: string;

  @ApiPropertyOptional({
    description: 'The secret: a bearer token or an API key. Write-only: never returned.',
    maxLength: 4096,
  })
  @ValidateIf((auth: UpstreamAuthDto) => auth.type !== 'none' || auth.value !== undefined)
  @IsString()
  @Length(1, 4096)
  value?: string;
}

/** `PUT /api/v1/identities/{handle}/upstream` (docs/api.md §14). */
export class SetUpstreamDto {
  @ApiProperty({
    description: "The upstream agent's A2A endpoint (https; the webhook URL rules apply).",
    maxLength: MAX_URL_LENGTH,
  })
  @IsString()
  @MaxLength(MAX_URL_LENGTH)
  url: string;

  @ApiPropertyOptional({
    description: 'Its Agent Card; default `<url>/.well-known/agent-card.json`.',
    maxLength: MAX_URL_LENGTH,
  })
  @Optional()
  @IsString()
  @MaxLength(MAX_URL_LENGTH)
  card_url?: string;

  @ApiPropertyOptional({ enum: UPSTREAM_VERSIONS, description: 'Default: from its card.' })
  @Optional()
  @IsIn(UPSTREAM_VERSIONS)
  protocol_version?: UpstreamVersion;

  @ApiPropertyOptional({
    enum: UPSTREAM_BINDINGS,
    description:
      'Default: from its card (the first interface it lists that the forwarder speaks). All three are forwarded.',
  })
  @Optional()
  @IsIn(UPSTREAM_BINDINGS)
  binding?: UpstreamBinding;

  @ApiPropertyOptional({ type: UpstreamAuthDto })
  @Optional()
  @Nested(() => UpstreamAuthDto)
  auth?: UpstreamAuthDto;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    example: { keys: [{ kty: 'EC', crv: 'P-256', kid: 'upstream-2026', x: '…', y: '…' }] },
    description:
      "The public keys that must have signed the upstream's Agent Card: a JWK Set (at most 20 EC, OKP or RSA public keys). A key without `kid` is known by its RFC 7638 thumbprint. Not with `trusted_jwks_uri`.",
  })
  @Optional()
  @IsObject()
  trusted_keys?: object;

  @ApiPropertyOptional({
    maxLength: MAX_URL_LENGTH,
    description:
      "Where the upstream's JWK Set is read (https; the webhook URL rules apply) each time its card is verified. Not with `trusted_keys`.",
  })
  @Optional()
  @IsString()
  @MaxLength(MAX_URL_LENGTH)
  trusted_jwks_uri?: string;
}
