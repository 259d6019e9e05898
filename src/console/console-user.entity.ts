import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

@Entity({ name: 'console_users' })
export class ConsoleUser {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId: string;

  @Column({ type: 'varchar' })
  email: string;

  /** The email as compared (unique, signup, login, invitations): see src/common/email-key.ts. */
  @Column({ name: 'email_key', type: 'varchar', select: false })
  emailKey: string;

  @Column({ name: 'password_hash', type: 'varchar', select: false })
  passwordHash: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  /** When a session last opened (signup, login, accepting an invitation). */
  @Column({ name: 'last_login_at', type: 'timestamptz', nullable: true })
  lastLoginAt: Date | null;
}
