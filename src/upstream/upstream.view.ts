import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import {
  UPSTREAM_AUTH_TYPES,
  UPSTREAM_BINDINGS,
  UPSTREAM_VERSIONS,
  type UpstreamBinding,
  type UpstreamVersion,
} from './dto/set-upstream.dto';
import type { UpstreamRecord } from './upstream.repository';

/** What every read shows: never the secret. */
export interface UpstreamView {
  url: string;
  card_url: string | null;
  protocol_version: UpstreamVersion;
  binding: UpstreamBinding;
  streaming: boolean;
  auth: { type: 'none' | 'bearer' | 'api_key'; header: string | null; value_set: boolean };
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
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
}
