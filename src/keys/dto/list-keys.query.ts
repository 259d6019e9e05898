import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { PageQuery } from '../../common/pagination';
import type { KeyScope } from '../key-format';
import type { KeyStatus } from '../api-key.entity';

export class ListKeysQuery extends PageQuery {
  @ApiPropertyOptional({ enum: ['admin', 'agent'] })
  @IsOptional()
  @IsIn(['admin', 'agent'])
  scope?: KeyScope;

  @ApiPropertyOptional({ description: 'Handle or id of the bound identity.' })
  @IsOptional()
  @IsString()
  @MaxLength(63)
  identity?: string;

  @ApiPropertyOptional({ enum: ['active', 'revoked'] })
  @IsOptional()
  @IsIn(['active', 'revoked'])
  status?: KeyStatus;
}
