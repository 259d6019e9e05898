import type { KeyCreatorType, KeyStatus } from './api-key.entity';
import type { KeyScope } from './key-format';

/** One row of the key metadata query (KeysService.SELECT_METADATA). */
export interface KeyRow {
  id: string;
  scope: KeyScope;
  identity_id: string | null;
  organization_id: string | null;
  label: string;
  description: string;
  status: KeyStatus;
  prefix: string;
  created_at: Date;
  created_by_type: KeyCreatorType;
  created_by_id: string | null;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

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
