import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { PageOf } from '../common/api-docs';
import { RULE_ACTIONS, type PeerType, type RuleAction, type RuleDirection } from './admission.decision';
import type { ContactRule } from './contact-rule.entity';

/** A contact rule as every read returns it (docs/api.md §6). */
export interface ContactRuleView {
  id: string;
  /** The owner's handle. */
  identity: string;
  direction: RuleDirection;
  action: RuleAction;
  /** An identity peer has its handle and its organization (null while unclaimed); an organization peer its id. */
  peer: { type: PeerType; handle: string | null; organization_id: string | null };
  /** The skills the rule is about, sorted; empty: every call (docs/api.md §16). */
  skills: string[];
  note: string;
  created_at: string;
  updated_at: string;
}

/** The handles and organizations of the identities that rules name, by id. */
export type IdentityNames = ReadonlyMap<
  string,
  { readonly agentHandle: string; readonly organizationId: string | null }
>;

export function namesOf(
  identities: ReadonlyArray<{ id: string; agentHandle: string; organizationId: string | null }>,
): IdentityNames {
  return new Map(identities.map((identity) => [identity.id, identity]));
}

/** `names` must hold the owner and any peer identity (foreign keys guarantee they exist). */
export function toContactRuleView(rule: ContactRule, names: IdentityNames): ContactRuleView {
  const peer = rule.peerIdentityId === null ? null : names.get(rule.peerIdentityId)!;
  return {
    id: rule.id,
    identity: names.get(rule.identityId)!.agentHandle,
    direction: rule.direction,
    action: rule.action,
    peer: peer
      ? { type: 'identity', handle: peer.agentHandle, organization_id: peer.organizationId }
      : { type: 'organization', handle: null, organization_id: rule.peerOrganizationId },
    skills: [...rule.skills],
    note: rule.note,
    created_at: rule.createdAt.toISOString(),
    updated_at: rule.updatedAt.toISOString(),
  };
}

@ApiSchema({ name: 'ContactRulePeer' })
class RulePeerSchema {
  @ApiProperty({ enum: ['identity', 'organization'] }) type: PeerType;
  @ApiProperty({
    type: String,
    nullable: true,
    description: "An identity peer's handle; null for an organization peer.",
  })
  handle: string | null;
  @ApiProperty({
    type: String,
    format: 'uuid',
    nullable: true,
    description: "The peer organization (an identity peer's, null while unclaimed).",
  })
  organization_id: string | null;
}

/** The OpenAPI schema of ContactRuleView (it must list every field the mapper returns). */
@ApiSchema({ name: 'ContactRule' })
export class ContactRuleSchema implements ContactRuleView {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ description: "The owner's handle." }) identity: string;
  @ApiProperty({ enum: ['inbound', 'outbound', 'both'] }) direction: RuleDirection;
  @ApiProperty({
    enum: RULE_ACTIONS,
    description: "`ask`: a new task of the pair waits for a person of the owner's organization to approve it.",
  })
  action: RuleAction;
  @ApiProperty({ type: RulePeerSchema }) peer: ContactRuleView['peer'];
  @ApiProperty({
    type: [String],
    description:
      'The skills the rule is about, sorted; empty: every call. A rule with skills applies only to a call naming one of them, and then beats every rule without skills (docs/api.md §16).',
  })
  skills: string[];
  @ApiProperty() note: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
}

export const ContactRulePage = PageOf(ContactRuleSchema, 'rules', 'ContactRuleList');
