import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsString, MaxLength } from 'class-validator';
import { PageQuery } from '../../common/pagination';
import { Optional } from '../../common/validation';
import { APPROVAL_STATES, type ApprovalState } from '../approval.entity';

/** `state` and `identity` (the handle of one of the organization's identities) filters, plus paging. */
export class ListApprovalsQuery extends PageQuery {
  @ApiPropertyOptional({ enum: APPROVAL_STATES })
  @Optional()
  @IsIn(APPROVAL_STATES)
  state?: ApprovalState;

  @ApiPropertyOptional({ description: 'The requests about one identity of your organization (its handle).' })
  @Optional()
  @IsString()
  @MaxLength(63)
  identity?: string;
}
