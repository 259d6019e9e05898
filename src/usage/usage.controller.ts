import { Controller, Get, Query, Req, Res } from '@nestjs/common';
import { ApiProduces, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { CurrentPrincipal } from '../auth/current-principal.decorator';
import { Surface } from '../auth/surface.decorator';
import { Returns } from '../common/api-docs';
import type { Principal } from '../common/principal';
import { UsageQuery } from './dto/usage.query';
import { UsageService } from './usage.service';
import { toUsageCsv, UsageSchema, type UsageView } from './usage.view';

@ApiTags('Usage')
@Controller('api/v1/usage')
export class UsageController {
  constructor(private readonly usage: UsageService) {}

  @Get()
  @Surface('ledger', {
    id: 'getUsage',
    summary: 'Usage of tasks that ended, grouped by identity, peer, organization, day or hour',
    notes:
      "Admin key or Console: the organization's identities (or `identity=`); an agent key: its own identity. `Accept: text/csv` or `format=csv` answers CSV.",
  })
  @ApiProduces('application/json', 'text/csv')
  @Returns(200, UsageSchema)
  async get(
    @CurrentPrincipal() principal: Principal,
    @Query() query: UsageQuery,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<UsageView | string> {
    const view = await this.usage.summarize(principal, query);
    if (
      query.format === 'csv' ||
      (query.format === undefined && req.accepts(['application/json', 'text/csv']) === 'text/csv')
    ) {
      res.type('text/csv').setHeader('Content-Disposition', 'attachment; filename="usage.csv"');
      return toUsageCsv(view);
    }
    return view;
  }
}
