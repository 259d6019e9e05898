import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  IsArray,
  IsIn,
  IsString,
  Length,
  Matches,
  MaxLength,
  ValidatorConstraint,
  type ValidatorConstraintInterface,
} from 'class-validator';
import { Optional } from '../../common/validation';
import { SKILL_VISIBILITIES, type SkillVisibility } from '../identity.entity';

/** A media type (`type/subtype`), as skills' and cards' modes name them. */
export const MEDIA_TYPE = /^[\w.+-]+\/[\w.+*-]+$/;

/**
 * Limits of docs/api.md §10 (≤ 20 tags of ≤ 50 characters), and ours where it is
 * silent: id and name ≤ 100, description ≤ 1,000, ≤ 10 examples of ≤ 500. With
 * ≤ 50 skills a card stays well inside the 256 KiB body limit.
 */
export const SKILL_LIMITS = {
  id: 100,
  name: 100,
  description: 1000,
  tags: 20,
  tag: 50,
  examples: 10,
  example: 500,
  modes: 20,
  mode: 100,
} as const;

/** A2A AgentSkill: `{id, name, description, tags[], examples?[]}`, plus this service's `visibility`. */
export class AgentSkillDto {
  @ApiProperty({ minLength: 1, maxLength: SKILL_LIMITS.id, example: 'invoice-lookup' })
  @IsString()
  @Length(1, SKILL_LIMITS.id)
  id: string;

  @ApiProperty({ minLength: 1, maxLength: SKILL_LIMITS.name, example: 'Invoice lookup' })
  @IsString()
  @Length(1, SKILL_LIMITS.name)
  name: string;

  @ApiProperty({ maxLength: SKILL_LIMITS.description })
  @IsString()
  @MaxLength(SKILL_LIMITS.description)
  description: string;

  @ApiProperty({ type: [String], maxItems: SKILL_LIMITS.tags })
  @IsArray()
  @ArrayMaxSize(SKILL_LIMITS.tags)
  @IsString({ each: true })
  @Length(1, SKILL_LIMITS.tag, { each: true })
  tags: string[];

  @ApiPropertyOptional({ type: [String], maxItems: SKILL_LIMITS.examples })
  @Optional()
  @IsArray()
  @ArrayMaxSize(SKILL_LIMITS.examples)
  @IsString({ each: true })
  @MaxLength(SKILL_LIMITS.example, { each: true })
  examples?: string[];

  @ApiPropertyOptional({
    type: [String],
    maxItems: SKILL_LIMITS.modes,
    description: 'Media types the skill accepts, beyond the card-wide `text/plain` and `application/json`.',
  })
  @Optional()
  @IsArray()
  @ArrayMaxSize(SKILL_LIMITS.modes)
  @Matches(MEDIA_TYPE, { each: true, message: 'each of inputModes must be a media type such as image/png' })
  @MaxLength(SKILL_LIMITS.mode, { each: true })
  inputModes?: string[];

  @ApiPropertyOptional({
    type: [String],
    maxItems: SKILL_LIMITS.modes,
    description: 'Media types the skill produces, beyond the card-wide `text/plain` and `application/json`.',
  })
  @Optional()
  @IsArray()
  @ArrayMaxSize(SKILL_LIMITS.modes)
  @Matches(MEDIA_TYPE, { each: true, message: 'each of outputModes must be a media type such as application/pdf' })
  @MaxLength(SKILL_LIMITS.mode, { each: true })
  outputModes?: string[];

  @ApiPropertyOptional({
    enum: SKILL_VISIBILITIES,
    default: 'public',
    description:
      '`public`: on the public Agent Card and in the directory. `admitted`: only on the extended card, for callers that pass the protocol checks and admission.',
  })
  @Optional()
  @IsIn(SKILL_VISIBILITIES)
  visibility?: SkillVisibility;
}

/** Skill ids identify a skill within its card, so they must not repeat. */
@ValidatorConstraint({ name: 'uniqueSkillIds' })
export class UniqueSkillIds implements ValidatorConstraintInterface {
  validate(skills: unknown): boolean {
    if (!Array.isArray(skills)) {
      return true;
    }
    const ids = skills.map((skill: { id?: unknown } | null) => skill?.id).filter((id) => typeof id === 'string');
    return new Set(ids).size === ids.length;
  }

  defaultMessage(): string {
    return 'skills must have unique ids';
  }
}
