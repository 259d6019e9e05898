import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import type { TrustedIssuerRecord } from './trusted-issuers.repository';

export interface TrustedIssuerView {
  id: string;
  issuer: string;
  jwks_uri: string | null;
  jwks: { keys: object[] } | null;
  audience: string;
  subject_claim: string;
  subjects: Record<string, string>;
  created_at: string;
}

export function toTrustedIssuerView(record: TrustedIssuerRecord): TrustedIssuerView {
  return {
    id: record.id,
    issuer: record.issuer,
    jwks_uri: record.jwksUri,
    jwks: record.jwks,
    audience: record.audience,
    subject_claim: record.subjectClaim,
    subjects: record.subjects,
    created_at: record.createdAt.toISOString(),
  };
}

@ApiSchema({ name: 'TrustedIssuer' })
export class TrustedIssuerSchema implements TrustedIssuerView {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() issuer: string;
  @ApiPropertyOptional({ type: String, nullable: true }) jwks_uri: string | null;
  @ApiPropertyOptional({
    type: 'object',
    nullable: true,
    description: 'Its public keys given inline (a JWK Set), or null.',
    properties: { keys: { type: 'array', items: { type: 'object', additionalProperties: true } } },
  })
  jwks: { keys: object[] } | null;
  @ApiProperty() audience: string;
  @ApiProperty() subject_claim: string;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' }, description: 'Subject → handle.' })
  subjects: Record<string, string>;
  @ApiProperty({ format: 'date-time' }) created_at: string;
}

@ApiSchema({ name: 'TrustedIssuerList' })
export class TrustedIssuerListSchema {
  @ApiProperty({ type: [TrustedIssuerSchema] }) items: TrustedIssuerView[];
}
