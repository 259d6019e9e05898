import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsObject, IsString, Length, Matches, MaxLength } from 'class-validator';
import { Optional } from '../../common/validation';

/** `POST /api/v1/trusted-issuers` (docs/api.md §17). */
export class CreateTrustedIssuerDto {
  @ApiProperty({ description: "The issuer's identifier, exactly as its tokens' `iss` (https).", maxLength: 2048 })
  @IsString()
  @Length(1, 2048)
  issuer: string;

  @ApiPropertyOptional({
    description:
      "Where the issuer's keys are (https); absent (and no `jwks`): from `{issuer}/.well-known/openid-configuration`.",
    maxLength: 2048,
  })
  @Optional()
  @IsString()
  @MaxLength(2048)
  jwks_uri?: string;

  @ApiPropertyOptional({
    description:
      "The issuer's public keys inline, a JWK Set of 1 to 20 keys each with its `kid` (an issuer with static keys). Not with `jwks_uri`.",
    type: 'object',
    properties: { keys: { type: 'array', items: { type: 'object', additionalProperties: true } } },
  })
  @Optional()
  @IsObject()
  jwks?: object;

  @ApiProperty({
    description: 'The `aud` its tokens must name (unique per issuer across the service).',
    maxLength: 2048,
  })
  @IsString()
  @Length(1, 2048)
  audience: string;

  @ApiPropertyOptional({ description: 'The claim that names the subject.', default: 'sub', maxLength: 100 })
  @Optional()
  @IsString()
  @Matches(/^[A-Za-z0-9_.:-]{1,100}$/, { message: 'subject_claim must be a claim name' })
  subject_claim?: string;

  @ApiProperty({
    description: "Subject → the handle of one of the organization's identities (at most 1,000).",
    type: 'object',
    additionalProperties: { type: 'string' },
    example: { 'system:serviceaccount:prod:billing': 'acme-billing' },
  })
  @IsObject()
  subjects: Record<string, string>;
}
