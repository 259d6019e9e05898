import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
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

  @ApiPropertyOptional({
    minimum: 1,
    maximum: 3650,
    description: 'Only active keys that have not expired and expire within this many days.',
  })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(3650)
  expiring_within_days?: number;
}
