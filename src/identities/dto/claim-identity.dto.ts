import { ApiProperty } from '@nestjs/swagger';
import { IsString, Length } from 'class-validator';

export class ClaimIdentityDto {
  @ApiProperty({ description: 'The claim code from the agent signup response.' })
  @IsString()
  @Length(1, 128)
  claim_code: string;
}
