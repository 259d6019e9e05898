import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsString, Matches, MaxLength } from 'class-validator';
import { PageQuery } from '../../common/pagination';
import { Optional } from '../../common/validation';
import { MEDIA_TYPE } from '../../identities/dto/agent-skill.dto';

/** Search and the filters on a card's skills, shared by both directories (docs/api.md §4). */
export class CardFiltersQuery extends PageQuery {
  @ApiPropertyOptional({
    maxLength: 200,
    description:
      'Words or a sentence describing the task: ranks by relevance over the handle, name, skills and description; ' +
      'stemmed word prefixes, and near spellings of names.',
  })
  @Optional()
  @IsString()
  @MaxLength(200)
  q?: string;

  @ApiPropertyOptional({
    maxLength: 100,
    description: 'Only agents with a skill of this id or name (case-insensitive).',
  })
  @Optional()
  @IsString()
  @MaxLength(100)
  skill?: string;

  @ApiPropertyOptional({ maxLength: 50, description: 'Only agents with a skill carrying this tag (case-insensitive).' })
  @Optional()
  @IsString()
  @MaxLength(50)
  tag?: string;

  @ApiPropertyOptional({
    maxLength: 100,
    description: 'Only agents accepting this media type: a default input mode of every card, or one a skill declares.',
  })
  @Optional()
  @Matches(MEDIA_TYPE, { message: 'input_mode must be a media type such as image/png' })
  @MaxLength(100)
  input_mode?: string;

  @ApiPropertyOptional({
    maxLength: 100,
    description: 'Only agents producing this media type: a default output mode of every card, or one a skill declares.',
  })
  @Optional()
  @Matches(MEDIA_TYPE, { message: 'output_mode must be a media type such as application/pdf' })
  @MaxLength(100)
  output_mode?: string;

  @ApiPropertyOptional({
    enum: ['true', 'false'],
    description:
      '`true`: only agents shown `available`; `false`: only those shown `unavailable` (an upstream failing its last forward attempts, or a task unanswered too long).',
  })
  @Optional()
  @Transform(({ value }: { value: unknown }) => (value === 'true' ? true : value === 'false' ? false : value))
  @IsBoolean()
  available?: boolean;
}
