import { Controller, Get, Query, Req, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Public } from '../auth/surface.decorator';
import { sendCacheable } from '../common/conditional-get';
import { AgentHandle } from '../identities/handle.pipe';
import { DirectoryService } from './directory.service';
import { PublicDirectoryQuery } from './dto/public-directory.query';

/** Cards may be cached briefly by clients and proxies; the server itself never caches identity state. */
const CARD_CACHE_CONTROL = 'public, max-age=60';

/** Public discovery (no credential): SEED-SPEC §4 and CONTRACT §4. */
@ApiTags('Discovery')
@Controller('a2a')
export class AgentCardsController {
  constructor(private readonly directory: DirectoryService) {}

  @Get('directory')
  @Public('The public directory: claimed, enabled, publicly discoverable agents and their cards')
  publicDirectory(@Query() query: PublicDirectoryQuery) {
    return this.directory.publicDirectory(query);
  }

  // The well-known path lets A2A clients that resolve `.well-known/agent-card.json`
  // relative to the agent's URL find the card.
  @Get([':handle/card', ':handle/.well-known/agent-card.json'])
  @Public('The Agent Card of an enabled, claimed agent (ETag; 304 on If-None-Match)')
  async card(@AgentHandle('agent_not_found') handle: string, @Req() req: Request, @Res() res: Response): Promise<void> {
    sendCacheable(req, res, await this.directory.card(handle), CARD_CACHE_CONTROL);
  }
}
