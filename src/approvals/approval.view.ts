import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import type { Side } from '../admission/admission.decision';
import { toMessageView, MessageSchema, type MessageView } from '../ledger/ledger.view';
import type { MessageRecord } from '../ledger/task-records';
import { APPROVAL_STATES, REMEMBER, type ApprovalState, type Remember } from './approval.entity';
import type { ApprovalRecord } from './approvals.repository';

interface PartyView {
  handle: string;
  organization_id: string;
}

/** An approval request as every read and decision returns it (docs/api.md §16). */
export interface ApprovalView {
  id: string;
  state: ApprovalState;
  /** The asking side: `identity` is that side's identity, `peer` the other. */
  side: Side;
  identity: { handle: string };
  peer: PartyView;
  requester: PartyView;
  worker: PartyView;
  first_task_id: string;
  /** The first task's first message, as the REST task view shows messages. */
  first_message: MessageView | null;
  /** How many tasks wait on the request (none once it is decided). */
  tasks: number;
  remember: Remember | null;
  reason: string | null;
  decided_by: { type: 'user' | 'key'; id: string; email?: string; label?: string } | null;
  created_at: string;
  expires_at: string;
  decided_at: string | null;
}

export function toApprovalView(approval: ApprovalRecord, firstMessage: MessageRecord | null): ApprovalView {
  const requester = { handle: approval.requesterHandle, organization_id: approval.requesterOrganizationId };
  const worker = { handle: approval.workerHandle, organization_id: approval.workerOrganizationId };
  const [own, peer] = approval.side === 'requester' ? [requester, worker] : [worker, requester];
  const { decidedByType: type, decidedById: id, decidedByLabel: label } = approval;
  return {
    id: approval.id,
    state: approval.state,
    side: approval.side,
    identity: { handle: own.handle },
    peer,
    requester,
    worker,
    first_task_id: approval.firstTaskId,
    first_message: firstMessage ? toMessageView(firstMessage) : null,
    tasks: approval.tasks,
    remember: approval.remember,
    reason: approval.reason,
    decided_by:
      type === null || id === null
        ? null
        : { type, id, ...(label === null ? {} : type === 'user' ? { email: label } : { label }) },
    created_at: approval.createdAt.toISOString(),
    expires_at: approval.expiresAt.toISOString(),
    decided_at: approval.decidedAt?.toISOString() ?? null,
  };
}

@ApiSchema({ name: 'ApprovalParty' })
class ApprovalPartySchema implements PartyView {
  @ApiProperty() handle: string;
  @ApiProperty({ format: 'uuid' }) organization_id: string;
}

@ApiSchema({ name: 'ApprovalIdentity' })
class ApprovalIdentitySchema {
  @ApiProperty({ description: 'The identity of your organization the request is about.' }) handle: string;
}

@ApiSchema({ name: 'ApprovalDecider' })
class ApprovalDeciderSchema {
  @ApiProperty({ enum: ['user', 'key'], description: 'A Console user, or an admin key.' }) type: 'user' | 'key';
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiPropertyOptional({ description: "The Console user's email." }) email?: string;
  @ApiPropertyOptional({ description: "The admin key's label." }) label?: string;
}

/** The OpenAPI schema of an approval request (docs/api.md §16). */
@ApiSchema({ name: 'Approval' })
export class ApprovalSchema implements ApprovalView {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ enum: APPROVAL_STATES }) state: ApprovalState;
  @ApiProperty({
    enum: ['requester', 'worker'],
    description: "The asking side: your identity's side of the pair (`peer` is the other).",
  })
  side: Side;
  @ApiProperty({ type: ApprovalIdentitySchema }) identity: { handle: string };
  @ApiProperty({ type: ApprovalPartySchema }) peer: PartyView;
  @ApiProperty({ type: ApprovalPartySchema }) requester: PartyView;
  @ApiProperty({ type: ApprovalPartySchema }) worker: PartyView;
  @ApiProperty({ format: 'uuid', description: 'The task that opened the request.' }) first_task_id: string;
  @ApiProperty({
    type: MessageSchema,
    nullable: true,
    description: "The first task's first message, as the task views show messages.",
  })
  first_message: MessageView | null;
  @ApiProperty({ description: 'How many tasks wait on the request (none once it is decided).' }) tasks: number;
  @ApiProperty({ enum: REMEMBER, nullable: true, description: 'How the decision was remembered.' })
  remember: Remember | null;
  @ApiProperty({ type: String, nullable: true, description: "The person's reason for a denial." })
  reason: string | null;
  @ApiProperty({
    type: ApprovalDeciderSchema,
    nullable: true,
    description: 'Who decided; null while pending or expired.',
  })
  decided_by: ApprovalView['decided_by'];
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) expires_at: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) decided_at: string | null;
}

/** `GET /api/v1/approvals`: a page, and how many of the organization's requests are pending. */
export interface ApprovalPageView {
  approvals: ApprovalView[];
  next_cursor: string | null;
  pending: number;
}

@ApiSchema({ name: 'ApprovalList' })
export class ApprovalPageSchema implements ApprovalPageView {
  @ApiProperty({ type: [ApprovalSchema] }) approvals: ApprovalView[];
  @ApiProperty({ type: String, nullable: true, description: 'The cursor of the next page; null on the last.' })
  next_cursor: string | null;
  @ApiProperty({ description: "How many of your organization's requests are pending (whatever the filters)." })
  pending: number;
}
