import { Controller, Get, Query, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { Public } from '../auth/surface.decorator';
import { AgentHandle } from '../identities/handle.pipe';
import { DirectoryService, type ServedCard } from './directory.service';
import { PublicDirectoryQuery } from './dto/public-directory.query';

/** Cards may be cached briefly by clients and proxies; the server itself never caches identity state. */
const CARD_CACHE_CONTROL = 'public, max-age=60';

/**
 * Sets the card's validators; Express answers 304 itself when `If-None-Match`
 * matches the ETag (req.fresh), sending no body.
 */
function cacheable(res: Response, served: ServedCard) {
  res.setHeader('ETag', served.etag);
  res.setHeader('Cache-Control', CARD_CACHE_CONTROL);
  return served.card;
}

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
  async card(@AgentHandle('agent_not_found') handle: string, @Res({ passthrough: true }) res: Response) {
    return cacheable(res, await this.directory.card(handle));
  }
}
