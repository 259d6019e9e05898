import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsString, IsUUID, MaxLength, ValidateIf } from 'class-validator';
import {
  PEER_TYPES,
  RULE_ACTIONS,
  RULE_DIRECTIONS,
  type PeerType,
  type RuleAction,
  type RuleDirection,
} from '../admission.decision';
import { Nested, Optional } from '../../common/validation';

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

  @ApiPropertyOptional({ maxLength: 500 })
  @Optional()
  @IsString()
  @MaxLength(500)
  note?: string;
}
