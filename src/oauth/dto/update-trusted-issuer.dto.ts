import { ApiPropertyOptional, OmitType, PartialType } from '@nestjs/swagger';
import { IsObject, IsOptional, IsString, MaxLength } from 'class-validator';
import { CreateTrustedIssuerDto } from './create-trusted-issuer.dto';

/**
 * `PATCH /api/v1/trusted-issuers/{id}` (docs/api.md §17): the fields given replace the
 * trust's (`subjects` as a whole). `jwks_uri` and `jwks` may be null (cleared); giving
 * one clears the other.
 */
export class UpdateTrustedIssuerDto extends PartialType(
  OmitType(CreateTrustedIssuerDto, ['jwks_uri', 'jwks'] as const),
  {
    skipNullProperties: false,
  },
) {
  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description: "Where the issuer's keys are (https); null: from its discovery document (or `jwks`).",
    maxLength: 2048,
  })
  @IsOptional()
  @IsString()
  @MaxLength(2048)
  jwks_uri?: string | null;

  @ApiPropertyOptional({
    description: "The issuer's public keys inline (a JWK Set, each key with its `kid`); null: none.",
    type: 'object',
    nullable: true,
    properties: { keys: { type: 'array', items: { type: 'object', additionalProperties: true } } },
  })
  @IsOptional()
  @IsObject()
  jwks?: object | null;
}
