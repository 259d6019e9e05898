import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal } from '../auth/current-principal.decorator';
import type { ConsolePrincipal } from '../common/principal';
import { Surface } from '../auth/surface.decorator';
import { Refuses, Returns } from '../common/api-docs';
import { PageQuery } from '../common/pagination';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { CreatedInviteView, InviteList, MemberList } from './console.view';
import { CreateInviteDto } from './dto/teams.dto';
import { TeamsService } from './teams.service';

/** Invitations and members (docs/api.md §13): a person's acts, so Console sessions only. */
@ApiTags('Console')
@Controller('api/v1/console')
export class TeamsController {
  constructor(private readonly teams: TeamsService) {}

  @Post('invites')
  @Surface('console', {
    id: 'createInvite',
    summary: 'Invite a person to your organization; returns the one-time link',
  })
  @Returns(201, CreatedInviteView)
  @Refuses({
    409: '`email_taken`: already a member of your organization; `member_limit` or `invite_limit`: the organization is full.',
  })
  invite(@CurrentPrincipal() principal: ConsolePrincipal, @Body() dto: CreateInviteDto): Promise<CreatedInviteView> {
    return this.teams.invite(principal, dto.email);
  }

  @Get('invites')
  @Surface('console', { id: 'listInvites', summary: 'List open invitations, newest first' })
  @Returns(200, InviteList)
  listInvites(@CurrentPrincipal() principal: ConsolePrincipal, @Query() query: PageQuery): Promise<InviteList> {
    return this.teams.listInvites(principal, query);
  }

  @Delete('invites/:id')
  @HttpCode(204)
  @Surface('console', { id: 'deleteInvite', summary: 'Withdraw an open invitation' })
  @Returns(204)
  @Refuses({ 404: '`invite_not_found`: no open invitation of your organization with that id.' })
  withdraw(
    @CurrentPrincipal() principal: ConsolePrincipal,
    @Param('id', new ParseIdPipe('invite_not_found', 'invitation')) id: string,
  ): Promise<void> {
    return this.teams.withdrawInvite(principal, id);
  }

  @Get('members')
  @Surface('console', { id: 'listMembers', summary: 'List the members of your organization, newest first' })
  @Returns(200, MemberList)
  listMembers(@CurrentPrincipal() principal: ConsolePrincipal, @Query() query: PageQuery): Promise<MemberList> {
    return this.teams.listMembers(principal, query);
  }

  @Delete('members/:id')
  @HttpCode(204)
  @Surface('console', { id: 'removeMember', summary: 'Remove a member; their sessions end at once' })
  @Returns(204)
  @Refuses({
    404: '`member_not_found`: no member of your organization with that id.',
    409: '`last_member`: the last member cannot be removed.',
  })
  removeMember(
    @CurrentPrincipal() principal: ConsolePrincipal,
    @Param('id', new ParseIdPipe('member_not_found', 'member')) id: string,
  ): Promise<void> {
    return this.teams.removeMember(principal, id);
  }
}
