import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, MaxLength } from 'class-validator';
import { PageQuery } from '../../common/pagination';

export class ListDecisionsQuery extends PageQuery {
  @ApiPropertyOptional({ description: 'Handle of an identity of your organization, as requester or worker.' })
  @IsOptional()
  @IsString()
  @MaxLength(63)
  identity?: string;
}
