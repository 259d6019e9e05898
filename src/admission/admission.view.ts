import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { PageOf } from '../common/api-docs';
import type { AdmissionDecisionRecord } from './admission-decision.entity';
import {
  reportedReason,
  type AdmissionDecision,
  type ReportedReason,
  type Side,
  type SideStance,
} from './admission.decision';
import { ContactRuleSchema, type ContactRuleView } from './contact-rule.view';

/** `POST /api/v1/admission/check` (docs/api.md §6). */
export interface AdmissionCheckView {
  /** False too while a side's approval is required: the work waits (docs/api.md §16). */
  allowed: boolean;
  /** The skill of the call (docs/api.md §16); null for a call that names none. */
  skill: string | null;
  reason: ReportedReason;
  /** The sides whose organization must approve a new task of the pair; empty when none. */
  approval_required_by: Side[];
  /** The caller's own organization's rules that took part; never the other side's. */
  rules: ContactRuleView[];
}

/**
 * The check's answer: the explanation, and what the caller's own side(s) say to the pair
 * by their rule or filter mode (docs/api.md §6) — so a denial by the other organization
 * (`denied_by_peer`) still tells whether the caller's side refuses too.
 */
export interface AdmissionCheckResultView extends AdmissionCheckView {
  own_stance: Partial<Record<Side, SideStance>>;
}

/** One recorded denial, as `GET /api/v1/admission/decisions` lists it. */
export interface AdmissionDecisionView extends AdmissionCheckView {
  id: string;
  requester: { handle: string; organization_id: string | null };
  worker: { handle: string; organization_id: string | null };
  created_at: string;
}

/** An explanation for the administrators of `viewer`: their side in full, the other side's decision as `denied_by_peer`. */
export function explain(
  outcome: Pick<AdmissionDecision, 'allowed' | 'skill' | 'reason' | 'decidedBy' | 'approval'>,
  effective: Record<Side, ContactRuleView | null>,
  organizations: Record<Side, string | null>,
  viewer: string,
): AdmissionCheckView {
  const own = (side: Side) => (organizations[side] === viewer ? effective[side] : null);
  return {
    allowed: outcome.allowed && outcome.approval.length === 0,
    skill: outcome.skill,
    reason: reportedReason(outcome, organizations, viewer),
    approval_required_by: [...outcome.approval],
    rules: [own('requester'), own('worker')].filter((rule): rule is ContactRuleView => rule !== null).map(copyRuleView),
  };
}

export function toDecisionView(record: AdmissionDecisionRecord, viewer: string): AdmissionDecisionView {
  const organizations = { requester: record.requesterOrganizationId, worker: record.workerOrganizationId };
  return {
    id: record.id,
    requester: { handle: record.requesterHandle, organization_id: record.requesterOrganizationId },
    worker: { handle: record.workerHandle, organization_id: record.workerOrganizationId },
    ...explain(
      { allowed: false, skill: record.skill, reason: record.reason, decidedBy: record.decidedBy, approval: [] },
      { requester: record.requesterRule, worker: record.workerRule },
      organizations,
      viewer,
    ),
    created_at: record.createdAt.toISOString(),
  };
}

/** Rules stored as JSON come back with their keys reordered; list them as every read does. */
function copyRuleView(rule: ContactRuleView): ContactRuleView {
  return {
    id: rule.id,
    identity: rule.identity,
    direction: rule.direction,
    action: rule.action,
    peer: { type: rule.peer.type, handle: rule.peer.handle, organization_id: rule.peer.organization_id },
    // Rules recorded before they could name skills have none: they were about every call.
    skills: [...(rule.skills ?? [])],
    note: rule.note,
    created_at: rule.created_at,
    updated_at: rule.updated_at,
  };
}

const REPORTED_REASONS: ReportedReason[] = [
  'requester_unclaimed',
  'requester_disabled',
  'worker_unavailable',
  'blocked_by_requester',
  'blocked_by_worker',
  'same_organization',
  'public_egress',
  'mutual_permit',
  'not_permitted_by_requester',
  'not_permitted_by_worker',
  'approval_required_by_requester',
  'approval_required_by_worker',
  'denied_by_peer',
];

/** The OpenAPI schema of AdmissionCheckView. */
@ApiSchema({ name: 'AdmissionCheck' })
export class AdmissionCheckSchema implements AdmissionCheckView {
  @ApiProperty() allowed: boolean;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The skill the call names (docs/api.md §16); null when it names none.',
  })
  skill: string | null;
  @ApiProperty({
    enum: REPORTED_REASONS,
    description: "Why; `denied_by_peer` when the other organization's side refused.",
  })
  reason: ReportedReason;
  @ApiProperty({
    enum: ['requester', 'worker'],
    isArray: true,
    description:
      'The sides whose organization must approve a new task of the pair (docs/api.md §16); `allowed` is false while any does.',
  })
  approval_required_by: Side[];
  @ApiProperty({
    type: [ContactRuleSchema],
    description: "Your organization's rules that took part; never the other side's.",
  })
  rules: ContactRuleView[];
}

@ApiSchema({ name: 'AdmissionOwnStance' })
class OwnStanceSchema {
  @ApiPropertyOptional({ enum: ['blocks', 'permits', 'asks', 'refuses'] }) requester?: SideStance;
  @ApiPropertyOptional({ enum: ['blocks', 'permits', 'asks', 'refuses'] }) worker?: SideStance;
}

/** The OpenAPI schema of AdmissionCheckResultView. */
@ApiSchema({ name: 'AdmissionCheckResult' })
export class AdmissionCheckResultSchema extends AdmissionCheckSchema implements AdmissionCheckResultView {
  @ApiProperty({
    type: OwnStanceSchema,
    description:
      "Between two organizations, what your side says to the pair by its rule or filter mode: `blocks`, `permits`, `asks` or `refuses` (no allow rule in whitelist mode). Only your side, never the other organization's; empty within one organization.",
  })
  own_stance: Partial<Record<Side, SideStance>>;
}

@ApiSchema({ name: 'AdmissionDecisionParty' })
class DecisionPartySchema {
  @ApiProperty() handle: string;
  @ApiProperty({ type: String, format: 'uuid', nullable: true }) organization_id: string | null;
}

@ApiSchema({ name: 'AdmissionDecision' })
export class AdmissionDecisionSchema extends AdmissionCheckSchema implements AdmissionDecisionView {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ type: DecisionPartySchema }) requester: { handle: string; organization_id: string | null };
  @ApiProperty({ type: DecisionPartySchema }) worker: { handle: string; organization_id: string | null };
  @ApiProperty({ format: 'date-time' }) created_at: string;
}

export const AdmissionDecisionPage = PageOf(AdmissionDecisionSchema, 'decisions', 'AdmissionDecisionList');
