import { ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsString, MaxLength, Validate } from 'class-validator';
import { Nested, Optional } from '../../common/validation';
import { AgentSkillDto, UniqueSkillIds } from './agent-skill.dto';

/** docs/api.md §10 string and list limits of the public card copy. */
export const CARD_LIMITS = { displayName: 100, description: 2000, skills: 50 } as const;

/** The public copy on the Agent Card: editable by the own key, admin key and Console. */
export class CardFieldsDto {
  @ApiPropertyOptional({
    maxLength: CARD_LIMITS.displayName,
    description: "Shown as the card's name; the handle when empty.",
  })
  @Optional()
  @IsString()
  @MaxLength(CARD_LIMITS.displayName)
  display_name?: string;

  @ApiPropertyOptional({ maxLength: CARD_LIMITS.description })
  @Optional()
  @IsString()
  @MaxLength(CARD_LIMITS.description)
  description?: string;

  @ApiPropertyOptional({ type: [AgentSkillDto], maxItems: CARD_LIMITS.skills })
  @Optional()
  @IsArray()
  @ArrayMaxSize(CARD_LIMITS.skills)
  @Nested(() => AgentSkillDto, { each: true })
  @Validate(UniqueSkillIds)
  skills?: AgentSkillDto[];
}
