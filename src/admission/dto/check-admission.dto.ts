import { ApiProperty } from '@nestjs/swagger';
import { IsString, MaxLength } from 'class-validator';

/** At least one of the two must be an identity of the caller's organization. */
export class CheckAdmissionDto {
  @ApiProperty({ description: 'Handle of the identity that would call.' })
  @IsString()
  @MaxLength(63)
  requester: string;

  @ApiProperty({ description: 'Handle of the identity that would be called.' })
  @IsString()
  @MaxLength(63)
  worker: string;
}
