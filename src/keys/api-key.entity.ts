import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';
import type { KeyScope } from './key-format';

export type KeyStatus = 'active' | 'revoked';
export type KeyCreatorType = 'console_user' | 'api_key' | 'signup';

@Entity({ name: 'api_keys' })
export class ApiKey {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  /** SHA-256 of the plaintext; the plaintext itself is never stored. */
  @Column({ name: 'key_hash', type: 'bytea', select: false })
  keyHash: Buffer;

  @Column({ type: 'varchar' })
  prefix: string;

  @Column({ type: 'varchar' })
  scope: KeyScope;

  /** Set for admin keys only; an agent key's organization is its identity's. */
  @Column({ name: 'organization_id', type: 'uuid', nullable: true })
  organizationId: string | null;

  @Column({ name: 'identity_id', type: 'uuid', nullable: true })
  identityId: string | null;

  @Column({ type: 'varchar' })
  label: string;

  @Column({ type: 'varchar' })
  description: string;

  @Column({ type: 'varchar' })
  status: KeyStatus;

  @Column({ name: 'created_by_type', type: 'varchar' })
  createdByType: KeyCreatorType;

  @Column({ name: 'created_by_id', type: 'uuid', nullable: true })
  createdById: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'last_used_at', type: 'timestamptz', nullable: true })
  lastUsedAt: Date | null;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt: Date | null;

  /** When the key stops working; null: never (docs/api.md §2, key lifetimes). */
  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true })
  expiresAt: Date | null;

  /** When its `api_key.expiring` event was written; null until then (sent once per key). */
  @Column({ name: 'expiry_notified_at', type: 'timestamptz', nullable: true })
  expiryNotifiedAt: Date | null;
}
