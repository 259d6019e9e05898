import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { PageOf } from '../common/api-docs';
import type { KeyCreatorType, KeyStatus } from './api-key.entity';
import type { KeyScope } from './key-format';
import type { KeyRecord } from './keys.repository';

/** Key metadata as every read returns it (docs/api.md §2). Never includes the hash. */
export interface KeyMetadata {
  id: string;
  scope: KeyScope;
  scoped_identity_id: string | null;
  organization_id: string | null;
  label: string;
  description: string;
  status: KeyStatus;
  prefix: string;
  created_at: string;
  created_by: { type: KeyCreatorType; id: string | null };
  last_used_at: string | null;
  revoked_at: string | null;
  expires_at: string | null;
}

export function toKeyMetadata(key: KeyRecord, lastUsedAt: Date | null = key.lastUsedAt): KeyMetadata {
  return {
    id: key.id,
    scope: key.scope,
    scoped_identity_id: key.identityId,
    organization_id: key.organizationId,
    label: key.label,
    description: key.description,
    status: key.status,
    prefix: key.prefix,
    created_at: key.createdAt.toISOString(),
    created_by: { type: key.createdByType, id: key.createdById },
    last_used_at: lastUsedAt?.toISOString() ?? null,
    revoked_at: key.revokedAt?.toISOString() ?? null,
    expires_at: key.expiresAt?.toISOString() ?? null,
  };
}

@ApiSchema({ name: 'ApiKeyCreator' })
class KeyCreatorSchema {
  @ApiProperty({ enum: ['console_user', 'api_key', 'signup'] })
  type: KeyCreatorType;

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The Console user or API key that minted it; null for agent signup.',
  })
  id: string | null;
}

/** The OpenAPI schema of KeyMetadata (it must list every field the mapper returns). */
@ApiSchema({ name: 'ApiKey' })
export class KeyMetadataSchema implements KeyMetadata {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ enum: ['admin', 'agent'] }) scope: KeyScope;
  @ApiProperty({
    type: String,
    format: 'uuid',
    nullable: true,
    description: 'The bound identity (agent keys); null for admin keys.',
  })
  scoped_identity_id: string | null;
  @ApiProperty({ type: String, format: 'uuid', nullable: true }) organization_id: string | null;
  @ApiProperty() label: string;
  @ApiProperty() description: string;
  @ApiProperty({ enum: ['active', 'revoked'] }) status: KeyStatus;
  @ApiProperty({ example: 'a2a_agt_Ab3d', description: 'The first characters of the key, to recognise it.' })
  prefix: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ type: KeyCreatorSchema }) created_by: { type: KeyCreatorType; id: string | null };
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) last_used_at: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) revoked_at: string | null;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'When the key stops working (401 `api_key_expired` from then on); null: never.',
  })
  expires_at: string | null;
}

/** A key just minted: its metadata and, this once, the plaintext. */
@ApiSchema({ name: 'MintedApiKey' })
export class MintedKeySchema extends KeyMetadataSchema {
  @ApiProperty({ description: 'The key itself. Shown only in this response; store it now.' }) key: string;
}

export const KeyPage = PageOf(KeyMetadataSchema, 'api_keys', 'ApiKeyList');
