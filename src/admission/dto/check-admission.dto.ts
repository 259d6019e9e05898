import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsString, Length, MaxLength } from 'class-validator';
import { Optional } from '../../common/validation';
import { SKILL_LIMITS } from '../../identities/dto/agent-skill.dto';

/** At least one of the two must be an identity of the caller's organization. */
export class CheckAdmissionDto {
  @ApiProperty({ description: 'Handle of the identity that would call.' })
  @IsString()
  @MaxLength(63)
  requester: string;

  @ApiProperty({ description: 'Handle of the identity that would be called.' })
  @IsString()
  @MaxLength(63)
  worker: string;

  @ApiPropertyOptional({
    description:
      "The skill the call would name (docs/api.md §16); absent: a call naming none. Not checked against the worker's card.",
  })
  @Optional()
  @IsString()
  @Length(1, SKILL_LIMITS.id)
  skill?: string;
}
