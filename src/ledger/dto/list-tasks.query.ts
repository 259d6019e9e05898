import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsISO8601, IsOptional, IsString, IsUUID, Max, MaxLength, Min } from 'class-validator';
import { PageQuery } from '../../common/pagination';
import type { LedgerRole as Role } from '../../auth/access';
import { TASK_STATES, type TaskState } from '../task-state';
import { SKILL_LIMITS } from '../../identities/dto/agent-skill.dto';

/** `true` / `false` in a query string. */
export const QueryBoolean = () =>
  Transform(({ value }) => (value === 'true' ? true : value === 'false' ? false : value));

/** Filters that tasks and contexts share: which side the caller is on, and who is on the other. */
export class ParticipantQuery extends PageQuery {
  @ApiPropertyOptional({
    enum: ['requester', 'worker'],
    description: "Only rows where the caller's side is the requester, or the worker.",
  })
  @IsOptional()
  @IsIn(['requester', 'worker'])
  role?: Role;

  @ApiPropertyOptional({ description: "Narrow the caller's side to one identity (handle or id)." })
  @IsOptional()
  @IsString()
  @MaxLength(63)
  identity?: string;

  @ApiPropertyOptional({ description: 'The identity on the other side (handle or id).' })
  @IsOptional()
  @IsString()
  @MaxLength(63)
  peer?: string;
}

export class ListTasksQuery extends ParticipantQuery {
  @ApiPropertyOptional({ enum: TASK_STATES })
  @IsOptional()
  @IsIn(TASK_STATES)
  state?: TaskState;

  @ApiPropertyOptional({ format: 'uuid' })
  @IsOptional()
  @IsUUID()
  context_id?: string;

  @ApiPropertyOptional({ description: 'Only tasks whose first message named this skill (docs/api.md §16).' })
  @IsOptional()
  @IsString()
  @MaxLength(SKILL_LIMITS.id)
  skill?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'Only tasks changed after this instant.' })
  @IsOptional()
  @IsISO8601({ strict: true })
  updated_after?: string;

  @ApiPropertyOptional({
    minimum: 0,
    default: 1,
    description:
      "How many of each task's most recent messages to include: at most LEDGER_MAX_HISTORY (default 100), and history_length × limit at most 200.",
  })
  @HistoryLength()
  history_length?: number;

  @ApiPropertyOptional({ default: false })
  @IsOptional()
  @QueryBoolean()
  @IsBoolean()
  include_artifacts?: boolean;
}

/** A history length in a query string; the service applies LEDGER_MAX_HISTORY and the list budget. */
function HistoryLength() {
  return applyDecorators(
    IsOptional(),
    Type(() => Number),
    IsInt(),
    Min(0),
    Max(100_000),
  );
}

export class ListContextsQuery extends ParticipantQuery {}

export class HistoryQuery {
  @ApiPropertyOptional({
    minimum: 0,
    description:
      'How many of the most recent messages to include: at most LEDGER_MAX_HISTORY (default 100), which is also the default. The whole history pages through /messages.',
  })
  @HistoryLength()
  history_length?: number;
}
