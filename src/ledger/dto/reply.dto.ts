import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsObject,
  IsString,
  Max,
  MaxLength,
  Min,
  MinLength,
} from 'class-validator';
import { MoneyDto } from '../../common/money';
import { MAX_REPORTED_TOKENS } from '../../usage/reported-usage';
import { Nested, Optional } from '../../common/validation';
import { MAX_ARTIFACTS_PER_REPLY, MAX_MESSAGE_PARTS } from '../parts';
import { REPLY_STATES, type ReplyState } from '../task-state';

const PARTS_DESCRIPTION =
  'A2A parts, in the v0.3 form (`{"kind":"text","text":"…"}`, `kind: file | data`) or the v1.0 form (`{"text":"…"}`, `raw`, `url`, `data`).';

export class ReplyMessageDto {
  @ApiProperty({
    type: 'array',
    items: { type: 'object' },
    minItems: 1,
    maxItems: MAX_MESSAGE_PARTS,
    description: PARTS_DESCRIPTION,
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_MESSAGE_PARTS)
  parts: unknown[];

  @ApiPropertyOptional({ type: 'object', additionalProperties: true })
  @Optional()
  @IsObject()
  metadata?: Record<string, unknown>;
}

export class ReplyArtifactDto {
  @ApiPropertyOptional({ maxLength: 200, description: 'Omitted: a new artifact with a generated id.' })
  @Optional()
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  artifactId?: string;

  @ApiPropertyOptional({ maxLength: 200 })
  @Optional()
  @IsString()
  @MaxLength(200)
  name?: string;

  @ApiPropertyOptional({ maxLength: 2000 })
  @Optional()
  @IsString()
  @MaxLength(2000)
  description?: string;

  @ApiProperty({
    type: 'array',
    items: { type: 'object' },
    minItems: 1,
    maxItems: MAX_MESSAGE_PARTS,
    description: PARTS_DESCRIPTION,
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_MESSAGE_PARTS)
  parts: unknown[];

  @ApiPropertyOptional({
    description: 'Append these parts to the artifact with this artifactId instead of replacing it.',
  })
  @Optional()
  @IsBoolean()
  append?: boolean;

  @ApiPropertyOptional({ description: 'The last chunk of this artifact: nothing more may be appended.' })
  @Optional()
  @IsBoolean()
  lastChunk?: boolean;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true })
  @Optional()
  @IsObject()
  metadata?: Record<string, unknown>;
}

/** The worker's reported usage for this reply (docs/api.md §18): added to the task's. */
export class ReplyUsageDto {
  @ApiPropertyOptional({ minimum: 0, maximum: MAX_REPORTED_TOKENS })
  @Optional()
  @IsInt()
  @Min(0)
  @Max(MAX_REPORTED_TOKENS)
  input_tokens?: number;

  @ApiPropertyOptional({ minimum: 0, maximum: MAX_REPORTED_TOKENS })
  @Optional()
  @IsInt()
  @Min(0)
  @Max(MAX_REPORTED_TOKENS)
  output_tokens?: number;

  @ApiPropertyOptional({
    type: MoneyDto,
    description: "A decimal string and an ISO 4217 code; every report of a task in the task's first currency.",
  })
  @Optional()
  @Nested(() => MoneyDto)
  cost?: MoneyDto;
}

/** `POST /api/v1/tasks/{id}/reply` (docs/api.md §7): at least one member. */
export class ReplyDto {
  @ApiPropertyOptional({ enum: REPLY_STATES })
  @Optional()
  @IsIn(REPLY_STATES)
  state?: ReplyState;

  @ApiPropertyOptional({ type: ReplyMessageDto })
  @Optional()
  @Nested(() => ReplyMessageDto)
  message?: ReplyMessageDto;

  @ApiPropertyOptional({ type: [ReplyArtifactDto], maxItems: MAX_ARTIFACTS_PER_REPLY })
  @Optional()
  @IsArray()
  @ArrayMaxSize(MAX_ARTIFACTS_PER_REPLY)
  @Nested(() => ReplyArtifactDto, { each: true })
  artifacts?: ReplyArtifactDto[];

  @ApiPropertyOptional({ type: ReplyUsageDto })
  @Optional()
  @Nested(() => ReplyUsageDto)
  usage?: ReplyUsageDto;
}
