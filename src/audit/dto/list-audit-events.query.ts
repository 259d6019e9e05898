import { ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsOptional,
  IsString,
  Matches,
  MaxLength,
  Validate,
  ValidatorConstraint,
  type ValidatorConstraintInterface,
} from 'class-validator';
import { PageQuery } from '../../common/pagination';
import { IsTimestamp } from '../../common/validation';
import { isUuid } from '../../common/parse-id.pipe';

@ValidatorConstraint({ name: 'isAuditActor' })
class IsActor implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    return value === 'signup' || isUuid(value);
  }
  defaultMessage(): string {
    return 'actor must be a Console user or API key id, or "signup"';
  }
}

export class ListAuditEventsQuery extends PageQuery {
  @ApiPropertyOptional({ description: "A Console user's or API key's id, or `signup`." })
  @IsOptional()
  @Validate(IsActor)
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
