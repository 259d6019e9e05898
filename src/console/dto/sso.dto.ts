import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsString, MaxLength } from 'class-validator';
import { Optional } from '../../common/validation';

/** `GET /api/v1/console/sso?next=`: where to land in the Console after signing in. */
export class SsoStartQuery {
  @ApiPropertyOptional({
    maxLength: 500,
    description: 'A Console path (`/console/…`) to land on after signing in; anything else lands on `/console/`.',
  })
  @Optional()
  @IsString()
  @MaxLength(500)
  next?: string;
}
