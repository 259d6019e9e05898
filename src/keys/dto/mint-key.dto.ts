import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsString, IsUUID, MaxLength } from 'class-validator';
import { Optional } from '../../common/validation';
import type { KeyScope } from '../key-format';

export class MintKeyDto {
  @ApiPropertyOptional({ enum: ['admin', 'agent'], default: 'agent', description: 'Admin keys may only mint agent keys.' })
  @Optional()
  @IsIn(['admin', 'agent'])
  scope?: KeyScope;

  @ApiPropertyOptional({ format: 'uuid', description: 'The identity an agent key is bound to; required for agent keys.' })
  @Optional()
  @IsUUID()
  scoped_identity_id?: string;

  @ApiPropertyOptional({ maxLength: 100 })
  @Optional()
  @IsString()
  @MaxLength(100)
  label?: string;

  @ApiPropertyOptional({ maxLength: 2000 })
  @Optional()
  @IsString()
  @MaxLength(2000)
  description?: string;
}
