import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import {
  UPSTREAM_AUTH_TYPES,
  UPSTREAM_BINDINGS,
  UPSTREAM_VERSIONS,
  type UpstreamBinding,
  type UpstreamVersion,
} from './dto/set-upstream.dto';
import type { CardVerificationStatus } from './card-verification';
import type { UpstreamRecord } from './upstream.repository';

/** The last verification of the upstream's card against its pinned keys (docs/api.md §14). */
export interface CardVerificationView {
  status: CardVerificationStatus;
  kid: string | null;
  error: string | null;
  checked_at: string;
}

/** What every read shows: never the secret. */
export interface UpstreamView {
  url: string;
  card_url: string | null;
  protocol_version: UpstreamVersion;
  binding: UpstreamBinding;
  streaming: boolean;
  auth: { type: 'none' | 'bearer' | 'api_key'; header: string | null; value_set: boolean };
  trusted_keys: { keys: object[] } | null;
  trusted_jwks_uri: string | null;
  card_verification: CardVerificationView | null;
  created_at: string;
  updated_at: string;
}

export const toUpstreamView = (record: UpstreamRecord): UpstreamView => ({
  url: record.url,
  card_url: record.cardUrl,
  protocol_version: record.protocolVersion,
  binding: record.binding,
  streaming: record.streaming,
  auth: { type: record.auth.type, header: record.auth.header, value_set: record.auth.value !== null },
  trusted_keys: record.trust.jwks,
  trusted_jwks_uri: record.trust.jwksUri,
  card_verification: record.card
    ? {
        status: record.card.verification.status,
        kid: record.card.verification.kid,
        error: record.card.verification.error,
        checked_at: record.card.checkedAt.toISOString(),
      }
    : null,
  created_at: record.createdAt.toISOString(),
  updated_at: record.updatedAt.toISOString(),
});

// --- OpenAPI schemas of UpstreamView (toUpstreamView); each must list every field its view has ---

type UpstreamAuthView = UpstreamView['auth'];

@ApiSchema({ name: 'UpstreamAuth' })
export class UpstreamAuthSchema implements UpstreamAuthView {
  @ApiProperty({ enum: UPSTREAM_AUTH_TYPES }) type: UpstreamAuthView['type'];
  @ApiProperty({ type: String, nullable: true, description: 'For `api_key`: the header that carries it.' }) header:
    string | null;
  @ApiProperty({ description: 'Whether a secret is stored. The secret itself is write-only: never returned.' })
  value_set: boolean;
}

@ApiSchema({ name: 'UpstreamCardVerification' })
export class CardVerificationSchema implements CardVerificationView {
  @ApiProperty({
    enum: ['verified', 'unsigned', 'failed'],
    description:
      '`verified`: a signature verified with a pinned key; `unsigned`: the card has no signatures; `failed`: none verified (or no keys are pinned).',
  })
  status: CardVerificationStatus;
  @ApiProperty({ type: String, nullable: true, description: 'The pinned key that verified it.' }) kid: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'Why it failed.' }) error: string | null;
  @ApiProperty({ format: 'date-time' }) checked_at: string;
}

@ApiSchema({ name: 'Upstream' })
export class UpstreamSchema implements UpstreamView {
  @ApiProperty({ format: 'uri', description: "The upstream agent's A2A endpoint." }) url: string;
  @ApiProperty({
    type: String,
    format: 'uri',
    nullable: true,
    description: 'Its Agent Card, when given; null: the well-known card under `url`.',
  })
  card_url: string | null;
  @ApiProperty({ enum: UPSTREAM_VERSIONS }) protocol_version: UpstreamVersion;
  @ApiProperty({ enum: UPSTREAM_BINDINGS }) binding: UpstreamBinding;
  @ApiProperty({ description: "Whether the upstream's card says it streams." }) streaming: boolean;
  @ApiProperty({ type: UpstreamAuthSchema }) auth: UpstreamAuthView;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    description: 'The public keys pinned for its card (a JWK Set), or null.',
  })
  trusted_keys: { keys: object[] } | null;
  @ApiProperty({ type: String, format: 'uri', nullable: true, description: 'Where its pinned keys are read, or null.' })
  trusted_jwks_uri: string | null;
  @ApiProperty({
    type: CardVerificationSchema,
    nullable: true,
    description: 'The last verification of its card; null until its card is read.',
  })
  card_verification: CardVerificationView | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
}
