import { Controller, Get, Query, Req, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Public } from '../auth/surface.decorator';
import { sendCacheable } from '../common/conditional-get';
import { AgentHandle } from '../identities/handle.pipe';
import { DirectoryService } from './directory.service';
import { PublicDirectoryQuery } from './dto/public-directory.query';
import { ApiResponse } from '@nestjs/swagger';
import { Refuses, Returns } from '../common/api-docs';
import { AgentCardSchema, PublicDirectoryPage } from './agent-card';

/** Cards may be cached briefly by clients and proxies; the server itself never caches identity state. */
const CARD_CACHE_CONTROL = 'public, max-age=60';
const CARD_NOTES = 'Served with an ETag; `If-None-Match` gives 304. Cacheable for 60 seconds.';

/** Public discovery (no credential): SEED-SPEC §4 and CONTRACT §4. */
@ApiTags('Discovery')
@Controller('a2a')
export class AgentCardsController {
  constructor(private readonly directory: DirectoryService) {}

  @Get('directory')
  @Public({ id: 'listPublicDirectory', summary: 'Browse the public directory: claimed, enabled, publicly discoverable agents and their cards' })
  @Returns(200, PublicDirectoryPage)
  publicDirectory(@Query() query: PublicDirectoryQuery) {
    return this.directory.publicDirectory(query);
  }

  @Get(':handle/card')
  @Public({ id: 'getAgentCard', summary: 'Read the Agent Card of an enabled, claimed agent', notes: CARD_NOTES })
  @Returns(200, AgentCardSchema)
  @ApiResponse({ status: 304, description: 'Not modified (the `If-None-Match` ETag matches).' })
  @Refuses({ 404: '`agent_not_found`: no enabled, claimed agent with that handle.' })
  async card(@AgentHandle('agent_not_found') handle: string, @Req() req: Request, @Res() res: Response): Promise<void> {
    sendCacheable(req, res, await this.directory.card(handle), CARD_CACHE_CONTROL);
  }

  // The well-known path lets A2A clients that resolve `.well-known/agent-card.json`
  // relative to the agent's URL find the card.
  @Get(':handle/.well-known/agent-card.json')
  @Public({ id: 'getWellKnownAgentCard', summary: 'Read the Agent Card at its well-known path', notes: CARD_NOTES })
  @Returns(200, AgentCardSchema)
  @ApiResponse({ status: 304, description: 'Not modified (the `If-None-Match` ETag matches).' })
  @Refuses({ 404: '`agent_not_found`: no enabled, claimed agent with that handle.' })
  async wellKnownCard(@AgentHandle('agent_not_found') handle: string, @Req() req: Request, @Res() res: Response): Promise<void> {
    return this.card(handle, req, res);
  }
}
