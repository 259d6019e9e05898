import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsString, MaxLength } from 'class-validator';
import { Optional } from '../../common/validation';
import { REMEMBER, type Remember } from '../approval.entity';

/** `POST /api/v1/approvals/{id}/approve` (docs/api.md §16). */
export class ApproveDto {
  @ApiProperty({
    enum: REMEMBER,
    description: '`once`: these tasks only; `always`: also a contact rule for the peer, so that it is not asked again.',
  })
  @IsIn(REMEMBER)
  remember: Remember;
}

/** `POST /api/v1/approvals/{id}/deny` (docs/api.md §16). */
export class DenyDto extends ApproveDto {
  @ApiPropertyOptional({ maxLength: 500, description: "Shown to the requester in the task's status message." })
  @Optional()
  @IsString()
  @MaxLength(500)
  reason?: string;
}
