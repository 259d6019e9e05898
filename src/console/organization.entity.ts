import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

@Entity({ name: 'organizations' })
export class Organization {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'varchar' })
  name: string;

  /** The longest lifetime a new API key may have, in days; null: no limit (docs/api.md §2). */
  @Column({ name: 'max_key_lifetime_days', type: 'integer', nullable: true })
  maxKeyLifetimeDays: number | null;

  /** False: the organization's members sign in with the provider only (docs/api.md §13, single sign-on). */
  @Column({ name: 'password_sign_in', type: 'boolean' })
  passwordSignIn: boolean;
  /** Forward only to upstreams whose Agent Card verified against their pinned keys (docs/api.md §14). */
  @Column({ name: 'require_verified_upstream_cards', type: 'boolean' })
  requireVerifiedUpstreamCards: boolean;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
