import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsString, MaxLength } from 'class-validator';
import { PageQuery } from '../../common/pagination';
import { Optional } from '../../common/validation';
import type { PublicListing } from '../../identities/identity-search.service';

export class PublicDirectoryQuery extends PageQuery implements PublicListing {
  @ApiPropertyOptional({
    maxLength: 200,
    description: 'Words to find in the name, handle, description and skills; each matches as a word prefix.',
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
}
