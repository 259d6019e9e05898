import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';
import type { AdmissionReason, Side } from './admission.decision';
import type { ContactRuleView } from './contact-rule.view';

/** A recorded denial (the decisions log). Participants and rules are copied as they were. */
@Entity({ name: 'admission_decisions' })
export class AdmissionDecisionRecord {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'requester_id', type: 'uuid' })
  requesterId: string;

  @Column({ name: 'requester_handle', type: 'varchar' })
  requesterHandle: string;

  @Column({ name: 'requester_organization_id', type: 'uuid', nullable: true })
  requesterOrganizationId: string | null;

  @Column({ name: 'worker_id', type: 'uuid' })
  workerId: string;

  @Column({ name: 'worker_handle', type: 'varchar' })
  workerHandle: string;

  @Column({ name: 'worker_organization_id', type: 'uuid', nullable: true })
  workerOrganizationId: string | null;

  /** The skill the denied call named (docs/api.md §16); null when it named none. */
  @Column({ type: 'varchar', nullable: true })
  skill: string | null;

  @Column({ type: 'varchar' })
  reason: AdmissionReason;

  @Column({ name: 'decided_by', type: 'varchar' })
  decidedBy: Side;

  /** The block rule that decided, if one did (not a foreign key: rules may be deleted later). */
  @Column({ name: 'rule_id', type: 'uuid', nullable: true })
  ruleId: string | null;

  @Column({ name: 'requester_rule', type: 'jsonb', nullable: true })
  requesterRule: ContactRuleView | null;

  @Column({ name: 'worker_rule', type: 'jsonb', nullable: true })
  workerRule: ContactRuleView | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
