import { Body, Controller, Delete, Get, HttpCode, Post, Put } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal } from '../auth/current-principal.decorator';
import type { AdminKeyPrincipal, ConsolePrincipal, Principal } from '../auth/principal';
import { Surface } from '../auth/surface.decorator';
import { AgentHandle } from '../identities/handle.pipe';
import { SetUpstreamDto } from './dto/set-upstream.dto';
import { UpstreamsService } from './upstreams.service';

type Admin = AdminKeyPrincipal | ConsolePrincipal;

@ApiTags('Upstream agents')
@Controller('api/v1/identities/:handle/upstream')
export class UpstreamController {
  constructor(private readonly upstreams: UpstreamsService) {}

  @Put()
  @Surface('organizationAdmin', 'Forward this identity\'s work to an existing A2A agent (its secret is write-only: never returned)')
  set(@CurrentPrincipal() principal: Admin, @AgentHandle() handle: string, @Body() dto: SetUpstreamDto) {
    return this.upstreams.set(principal, handle, dto);
  }

  @Get()
  @Surface('upstreamRead', 'The identity\'s upstream agent, without its secret')
  get(@CurrentPrincipal() principal: Principal, @AgentHandle() handle: string) {
    return this.upstreams.get(principal, handle);
  }

  @Delete()
  @HttpCode(204)
  @Surface('organizationAdmin', 'Stop forwarding: the identity answers through the ledger again')
  remove(@CurrentPrincipal() principal: Admin, @AgentHandle() handle: string) {
    return this.upstreams.remove(principal, handle);
  }

  @Post('import-card')
  @HttpCode(200)
  @Surface('organizationAdmin', 'Copy the upstream\'s Agent Card description and skills into this identity\'s card')
  importCard(@CurrentPrincipal() principal: Admin, @AgentHandle() handle: string) {
    return this.upstreams.importCard(principal, handle);
  }
}
