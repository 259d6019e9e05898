import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

export type AuditActorType = 'console_user' | 'api_key' | 'signup';

/** One change made by a principal (docs/api.md §15); written in the change's transaction. */
@Entity({ name: 'audit_events' })
export class AuditEvent {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId: string;

  @Column({ name: 'actor_type', type: 'varchar' })
  actorType: AuditActorType;

  /** The Console user's or API key's id; null for signup. */
  @Column({ name: 'actor_id', type: 'uuid', nullable: true })
  actorId: string | null;

  /** The key's label (or user's email) when the change was made. */
  @Column({ name: 'actor_label', type: 'varchar', nullable: true })
  actorLabel: string | null;

  @Column({ type: 'varchar' })
  action: string;

  @Column({ name: 'target_type', type: 'varchar' })
  targetType: string;

  @Column({ name: 'target_id', type: 'varchar', nullable: true })
  targetId: string | null;

  /** A handle, label or email that names the target for a reader. */
  @Column({ name: 'target_label', type: 'varchar', nullable: true })
  targetLabel: string | null;

  /** `{ field: { before, after } }` for the target type's allow-listed fields. */
  @Column({ type: 'jsonb' })
  changes: Record<string, { before: unknown; after: unknown }>;

  @Column({ name: 'request_id', type: 'varchar', nullable: true })
  requestId: string | null;

  @Column({ name: 'client_address', type: 'varchar', nullable: true })
  clientAddress: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
