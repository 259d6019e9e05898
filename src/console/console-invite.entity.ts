import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** An invitation to join an organization (docs/api.md §13). Open while not accepted and not expired. */
@Entity({ name: 'console_invites' })
export class ConsoleInvite {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId: string;

  @Column({ type: 'varchar' })
  email: string;

  /** The email as compared (a single sign-on finds the person's invitation by it): see email-key.ts. */
  @Column({ name: 'email_key', type: 'varchar', select: false })
  emailKey: string;

  /** SHA-256 of the invitation code; the code itself is shown once and never stored. */
  @Column({ name: 'code_hash', type: 'bytea', select: false })
  codeHash: Buffer;

  @Column({ name: 'invited_by', type: 'uuid', nullable: true })
  invitedBy: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;

  @Column({ name: 'accepted_at', type: 'timestamptz', nullable: true })
  acceptedAt: Date | null;

  @Column({ name: 'accepted_by', type: 'uuid', nullable: true })
  acceptedBy: string | null;
}
