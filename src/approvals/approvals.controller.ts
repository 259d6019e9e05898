import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal } from '../auth/current-principal.decorator';
import { Surface } from '../auth/surface.decorator';
import { Refuses, Returns } from '../common/api-docs';
import { ParseIdPipe } from '../common/parse-id.pipe';
import type { AdminKeyPrincipal, ConsolePrincipal } from '../common/principal';
import { ApprovalPageSchema, ApprovalSchema } from './approval.view';
import { ApprovalsService } from './approvals.service';
import { ApproveDto, DenyDto } from './dto/decide-approval.dto';
import { ListApprovalsQuery } from './dto/list-approvals.query';

const ApprovalId = () => Param('id', new ParseIdPipe('approval_not_found', 'approval request'));

/** docs/api.md §16: the deciding organization's people (admin keys, Console) read and decide its approval requests. */
@ApiTags('Approvals')
@Controller('api/v1/approvals')
export class ApprovalsController {
  constructor(private readonly approvals: ApprovalsService) {}

  @Get()
  @Surface('organizationAdmin', {
    id: 'listApprovals',
    summary: "List your organization's approval requests, newest first",
    notes: 'Each request holds the new tasks of one pair until a person of your organization approves or denies them.',
  })
  @Returns(200, ApprovalPageSchema)
  list(@CurrentPrincipal() principal: AdminKeyPrincipal | ConsolePrincipal, @Query() query: ListApprovalsQuery) {
    return this.approvals.list(principal, query);
  }

  @Post(':id/approve')
  @HttpCode(200)
  @Surface('organizationAdmin', {
    id: 'approveApproval',
    summary: 'Approve a request: its tasks go to the worker',
    notes: '`always` also writes an `allow` contact rule for the peer, so that it is not asked again.',
  })
  @Returns(200, ApprovalSchema)
  @Refuses({ 409: '`approval_decided`: the request was decided already, or it expired.' })
  approve(
    @CurrentPrincipal() principal: AdminKeyPrincipal | ConsolePrincipal,
    @ApprovalId() id: string,
    @Body() dto: ApproveDto,
  ) {
    return this.approvals.approve(principal, id, dto);
  }

  @Post(':id/deny')
  @HttpCode(200)
  @Surface('organizationAdmin', {
    id: 'denyApproval',
    summary: 'Deny a request: its tasks are rejected',
    notes: '`always` also writes a `block` contact rule for the peer.',
  })
  @Returns(200, ApprovalSchema)
  @Refuses({ 409: '`approval_decided`: the request was decided already, or it expired.' })
  deny(
    @CurrentPrincipal() principal: AdminKeyPrincipal | ConsolePrincipal,
    @ApprovalId() id: string,
    @Body() dto: DenyDto,
  ) {
    return this.approvals.deny(principal, id, dto);
  }
}
