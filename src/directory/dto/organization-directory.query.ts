import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsIn } from 'class-validator';
import { Optional } from '../../common/validation';
import { CardFiltersQuery } from './card-filters.query';
import type { IdentityStatus } from '../../identities/identity.entity';

/** `true` / `false` in a query string; anything else is left for IsBoolean to refuse. */
const BooleanQuery = () =>
  Transform(({ value }: { value: unknown }) => (value === 'true' ? true : value === 'false' ? false : value));

export class OrganizationDirectoryQuery extends CardFiltersQuery {
  @ApiPropertyOptional({ enum: ['true', 'false'] })
  @Optional()
  @BooleanQuery()
  @IsBoolean()
  enabled?: boolean;

  @ApiPropertyOptional({ enum: ['true', 'false'] })
  @Optional()
  @BooleanQuery()
  @IsBoolean()
  claimed?: boolean;

  @ApiPropertyOptional({ enum: ['active', 'deleted'] })
  @Optional()
  @IsIn(['active', 'deleted'])
  status?: IdentityStatus;
}
