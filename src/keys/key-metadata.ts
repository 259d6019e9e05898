import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { PageOf } from '../common/api-docs';
import type { KeyCreatorType, KeyStatus } from './api-key.entity';
import type { KeyScope } from './key-format';
import type { KeyRow } from './keys.repository';

/** Key metadata as every read returns it (CONTRACT §2). Never includes the hash. */
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
}

export function toKeyMetadata(row: KeyRow, lastUsedAt: Date | null = row.last_used_at): KeyMetadata {
  return {
    id: row.id,
    scope: row.scope,
    scoped_identity_id: row.identity_id,
    organization_id: row.organization_id,
    label: row.label,
    description: row.description,
    status: row.status,
    prefix: row.prefix,
    created_at: row.created_at.toISOString(),
    created_by: { type: row.created_by_type, id: row.created_by_id },
    last_used_at: lastUsedAt?.toISOString() ?? null,
    revoked_at: row.revoked_at?.toISOString() ?? null,
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
}

/** A key just minted: its metadata and, this once, the plaintext. */
@ApiSchema({ name: 'MintedApiKey' })
export class MintedKeySchema extends KeyMetadataSchema {
  @ApiProperty({ description: 'The key itself. Shown only in this response; store it now.' }) key: string;
}

export const KeyPage = PageOf(KeyMetadataSchema, 'api_keys', 'ApiKeyList');
