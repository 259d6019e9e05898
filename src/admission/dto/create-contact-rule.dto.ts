import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsIn, IsString, IsUUID, Length, MaxLength, ValidateIf } from 'class-validator';
import {
  PEER_TYPES,
  RULE_ACTIONS,
  RULE_DIRECTIONS,
  type PeerType,
  type RuleAction,
  type RuleDirection,
} from '../admission.decision';
import { Nested, Optional } from '../../common/validation';
import { SKILL_LIMITS } from '../../identities/dto/agent-skill.dto';

/** docs/api.md §16: a rule names at most this many skills. */
export const MAX_RULE_SKILLS = 20;

/** `{type: 'identity', handle}` or `{type: 'organization', organization_id}`. */
export class RulePeerDto {
  @ApiProperty({ enum: PEER_TYPES })
  @IsIn(PEER_TYPES)
  type: PeerType;

  @ApiPropertyOptional({ description: "The peer identity's handle; required when type is identity." })
  @ValidateIf((peer: RulePeerDto) => peer.type === 'identity')
  @IsString()
  @MaxLength(63)
  handle?: string;

  @ApiPropertyOptional({
    format: 'uuid',
    description: "The peer organization's id; required when type is organization.",
  })
  @ValidateIf((peer: RulePeerDto) => peer.type === 'organization')
  @IsUUID()
  organization_id?: string;
}

export class CreateContactRuleDto {
  @ApiProperty({ description: 'Handle of the identity that owns the rule (an identity of your organization).' })
  @IsString()
  @MaxLength(63)
  identity: string;

  @ApiProperty({ enum: RULE_DIRECTIONS })
  @IsIn(RULE_DIRECTIONS)
  direction: RuleDirection;

  @ApiProperty({ enum: RULE_ACTIONS })
  @IsIn(RULE_ACTIONS)
  action: RuleAction;

  @ApiProperty({ type: RulePeerDto })
  @Nested(() => RulePeerDto)
  peer: RulePeerDto;

  @ApiPropertyOptional({
    type: [String],
    maxItems: MAX_RULE_SKILLS,
    description:
      "Skill ids the rule is about (absent or empty: every call): of the owner's card for an inbound or both rule; of the peer identity's card for an outbound one (its public skills, unless it is of your organization); not checked for an outbound rule naming an organization (docs/api.md §16).",
  })
  @Optional()
  @IsArray()
  @ArrayMaxSize(MAX_RULE_SKILLS)
  @IsString({ each: true })
  @Length(1, SKILL_LIMITS.id, { each: true })
  skills?: string[];

  @ApiPropertyOptional({ maxLength: 500 })
  @Optional()
  @IsString()
  @MaxLength(500)
  note?: string;
}
