import { Controller, Get, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal } from '../auth/current-principal.decorator';
import { Surface } from '../auth/surface.decorator';
import { Returns } from '../common/api-docs';
import type { AdminKeyPrincipal, ConsolePrincipal } from '../common/principal';
import { OverviewQuery } from './dto/overview.query';
import { OverviewSchema } from './overview.view';
import { OverviewService } from './overview.service';

@ApiTags('Overview')
@Controller('api/v1/overview')
export class OverviewController {
  constructor(private readonly overview: OverviewService) {}

  @Get()
  @Surface('organizationAdmin', {
    id: 'getOverview',
    summary: "Your organization's last hours at a glance",
    notes:
      'Tasks per hour by state, time to complete (p50/p95), admission denials, webhook and upstream delivery health, approvals waiting, and what needs attention.',
  })
  @Returns(200, OverviewSchema)
  get(@CurrentPrincipal() principal: AdminKeyPrincipal | ConsolePrincipal, @Query() query: OverviewQuery) {
    return this.overview.overview(principal, query);
  }
}
