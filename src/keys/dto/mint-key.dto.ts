import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, IsUUID, MaxLength } from 'class-validator';
import type { KeyScope } from '../key-format';

export class MintKeyDto {
  @ApiPropertyOptional({ enum: ['admin', 'agent'], default: 'agent', description: 'Admin keys may only mint agent keys.' })
  @IsOptional()
  @IsIn(['admin', 'agent'])
  scope?: KeyScope;

  @ApiPropertyOptional({ format: 'uuid', description: 'The identity an agent key is bound to; required for agent keys.' })
  @IsOptional()
  @IsUUID()
  scoped_identity_id?: string;

  @ApiPropertyOptional({ maxLength: 100 })
  @IsOptional()
  @IsString()
  @MaxLength(100)
  label?: string;

  @ApiPropertyOptional({ maxLength: 2000 })
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  description?: string;
}
