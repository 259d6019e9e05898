import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsUUID } from 'class-validator';
import { IsTimestamp, Optional } from '../../common/validation';
import type { KeyScope } from '../key-format';
import { UpdateKeyDto } from './update-key.dto';

/** Scope, binding and lifetime, fixed at creation, plus the editable label and description. */
export class MintKeyDto extends UpdateKeyDto {
  @ApiPropertyOptional({
    enum: ['admin', 'agent'],
    default: 'agent',
    description: 'Admin keys may only mint agent keys.',
  })
  @Optional()
  @IsIn(['admin', 'agent'])
  scope?: KeyScope;

  @ApiPropertyOptional({
    format: 'uuid',
    description: 'The identity an agent key is bound to; required for agent keys.',
  })
  @Optional()
  @IsUUID()
  scoped_identity_id?: string;

  @ApiPropertyOptional({
    format: 'date-time',
    description:
      "When the key stops working; in the future, and within the organization's `max_key_lifetime_days` if it sets one. Omitted: that maximum from now, or never.",
  })
  @Optional()
  @IsTimestamp()
  expires_at?: string;
}
