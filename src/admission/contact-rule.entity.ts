import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import type { PeerType, RuleAction, RuleDirection, RuleFacts } from './admission.decision';

@Entity({ name: 'contact_rules' })
export class ContactRule implements RuleFacts {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  /** The identity that owns the rule. */
  @Column({ name: 'identity_id', type: 'uuid' })
  identityId: string;

  /** The owner's organization, copied at creation (a claimed identity never changes organization). */
  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId: string;

  @Column({ type: 'varchar' })
  direction: RuleDirection;

  @Column({ type: 'varchar' })
  action: RuleAction;

  @Column({ name: 'peer_type', type: 'varchar' })
  peerType: PeerType;

  @Column({ name: 'peer_identity_id', type: 'uuid', nullable: true })
  peerIdentityId: string | null;

  @Column({ name: 'peer_organization_id', type: 'uuid', nullable: true })
  peerOrganizationId: string | null;

  /** The skills the rule is about, sorted and without repeats; empty: every call (docs/api.md §16). */
  @Column({ type: 'text', array: true })
  skills: string[];

  @Column({ type: 'varchar' })
  note: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
