import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

export type WebhookStatus = 'active' | 'disabled';

/** A webhook subscription: organization-wide, or scoped to one identity of it. */
@Entity({ name: 'webhooks' })
export class Webhook {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId: string;

  /** Null: every event of the organization; set: only the events about this identity. */
  @Column({ name: 'identity_id', type: 'uuid', nullable: true })
  identityId: string | null;

  @Column({ type: 'varchar' })
  url: string;

  /** Event types, or `['*']`. */
  @Column({ type: 'text', array: true })
  events: string[];

  @Column({ type: 'varchar' })
  description: string;

  /** The signing secret (whsec_…). Never selected by default; never returned after it is issued. */
  @Column({ type: 'varchar', select: false })
  secret: string;

  /** After a rotation, the old secret keeps signing until previousSecretExpiresAt. */
  @Column({ name: 'previous_secret', type: 'varchar', nullable: true, select: false })
  previousSecret: string | null;

  @Column({ name: 'previous_secret_expires_at', type: 'timestamptz', nullable: true })
  previousSecretExpiresAt: Date | null;

  @Column({ type: 'varchar' })
  status: WebhookStatus;

  /** Start of the current run of failed attempts; null after a success. */
  @Column({ name: 'failing_since', type: 'timestamptz', nullable: true })
  failingSince: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
