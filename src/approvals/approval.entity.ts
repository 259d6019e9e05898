import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';
import type { Side } from '../admission/admission.decision';
import { Participants } from '../ledger/entities/participants.embedded';

export const APPROVAL_STATES = ['pending', 'approved', 'denied', 'expired'] as const;
export type ApprovalState = (typeof APPROVAL_STATES)[number];

/** How long a decision holds: this task only (`once`), or a contact rule for the peer from now on (`always`). */
export const REMEMBER = ['once', 'always'] as const;
export type Remember = (typeof REMEMBER)[number];

/**
 * A request for a person of the deciding organization to approve the new tasks of a
 * pair (docs/api.md §16): one per pair and side while pending; the tasks started
 * meanwhile wait on it (ApprovalTask). The pair's columns are a task's (Participants).
 */
@Entity({ name: 'approvals' })
export class Approval extends Participants {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  /** The deciding organization: the asking side's. */
  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId: string;

  /** Which side of the pair asks: its identity is the deciding one, the other is the peer. */
  @Column({ type: 'varchar' })
  side: Side;

  @Column({ type: 'varchar' })
  state: ApprovalState;

  @Column({ type: 'varchar', nullable: true })
  remember: Remember | null;

  /** The person's reason for a denial. */
  @Column({ type: 'varchar', nullable: true })
  reason: string | null;

  @Column({ name: 'decided_by_type', type: 'varchar', nullable: true })
  decidedByType: 'user' | 'key' | null;

  /** The Console user's or admin key's id. */
  @Column({ name: 'decided_by_id', type: 'uuid', nullable: true })
  decidedById: string | null;

  /** The user's email or the key's label, as they were at the decision. */
  @Column({ name: 'decided_by_label', type: 'varchar', nullable: true })
  decidedByLabel: string | null;

  /** The task that opened the request. */
  @Column({ name: 'first_task_id', type: 'uuid' })
  firstTaskId: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  /** created_at + APPROVAL_TTL_HOURS: undecided by then, the request expires. */
  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;

  @Column({ name: 'decided_at', type: 'timestamptz', nullable: true })
  decidedAt: Date | null;
}
