import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { PageQuery } from '../../common/pagination';
import { IsTimestamp } from '../../common/validation';

export class ListAuditEventsQuery extends PageQuery {
  @ApiPropertyOptional({
    description: "A Console user's or API key's id, `signup`, a Console user's email or an API key's label.",
  })
  @IsOptional()
  @IsString()
  @MaxLength(320)
  actor?: string;

  @ApiPropertyOptional({ description: "The target's id, or its handle or label." })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  target?: string;

  @ApiPropertyOptional({
    description: 'An action (`api_key.revoked`), or a prefix ending in `.*` (`api_key.*`).',
    example: 'api_key.*',
  })
  @IsOptional()
  @Matches(/^[a-z_]+(\.[a-z_]+|\.\*)?$/, { message: 'action must look like api_key.revoked or api_key.*' })
  @MaxLength(64)
  action?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'Only entries at or after this time.' })
  @IsOptional()
  @IsTimestamp()
  since?: string;
}
