import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsString, MaxLength } from 'class-validator';
import { Optional } from '../../common/validation';

/** Only label and description are editable; any other field is refused with 400. */
export class UpdateKeyDto {
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
