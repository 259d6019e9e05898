import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsString, MaxLength } from 'class-validator';
import { PageQuery } from '../../common/pagination';
import { Optional } from '../../common/validation';
import type { OrganizationListing } from '../../identities/identity-search.service';
import type { IdentityStatus } from '../../identities/identity.entity';

/** `true` / `false` in a query string; anything else is left for IsBoolean to refuse. */
const BooleanQuery = () =>
  Transform(({ value }: { value: unknown }) => (value === 'true' ? true : value === 'false' ? false : value));

export class OrganizationDirectoryQuery extends PageQuery implements OrganizationListing {
  @ApiPropertyOptional({ maxLength: 200, description: 'Words to find in the name, handle, description and skills.' })
  @Optional()
  @IsString()
  @MaxLength(200)
  q?: string;

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
