import { Controller, Get, Query, Req, Res } from '@nestjs/common';
import { ApiHeader, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Public } from '../auth/surface.decorator';
import { sendCacheable } from '../common/conditional-get';
import { AgentHandle } from '../identities/handle.pipe';
import { DirectoryService } from './directory.service';
import { PublicDirectoryQuery } from './dto/public-directory.query';
import { Refuses, Returns } from '../common/api-docs';
import { AgentCardSchema, cardGeneration, PublicDirectoryPage } from './agent-card';

/** Cards may be cached briefly by clients and proxies; the server itself never caches identity state. */
const CARD_CACHE_CONTROL = 'public, max-age=60';
const CARD_NOTES = 'Served with an ETag; `If-None-Match` gives 304. Cacheable for 60 seconds.';

/** Public discovery (no credential): docs/api.md §4. */
@ApiTags('Discovery')
@Controller('a2a')
export class AgentCardsController {
  constructor(private readonly directory: DirectoryService) {}

  // The directory embeds each card in the generation the request asks for, exactly as
  // the card endpoint would serve it (A2A-Version chooses; header-less → v0.3 hybrid).
  @Get('directory')
  @ApiHeader({
    name: 'A2A-Version',
    required: false,
    description: '1.0 → v1.0 cards; 0.3 or absent → v0.3 hybrid cards.',
  })
  @Public({
    id: 'listPublicDirectory',
    summary: 'Browse the public directory: claimed, enabled, publicly discoverable agents and their signed cards',
  })
  @Returns(200, PublicDirectoryPage)
  async publicDirectory(
    @Query() query: PublicDirectoryQuery,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ) {
    res.vary('A2A-Version');
    return this.directory.publicDirectory(query, cardGeneration(req.header('a2a-version')));
  }

  @Get(':handle/card')
  @ApiHeader({
    name: 'A2A-Version',
    required: false,
    description: '1.0 → the v1.0 card; 0.3 or absent → the v0.3 hybrid card.',
  })
  @Public({
    id: 'getAgentCard',
    summary: 'Read the signed Agent Card of an enabled, claimed agent, per A2A-Version',
    notes: CARD_NOTES,
  })
  @Returns(200, AgentCardSchema)
  @ApiResponse({ status: 304, description: 'Not modified (the `If-None-Match` ETag matches).' })
  @Refuses({ 404: '`agent_not_found`: no enabled, claimed agent with that handle.' })
  async card(@AgentHandle('agent_not_found') handle: string, @Req() req: Request, @Res() res: Response): Promise<void> {
    res.vary('A2A-Version');
    sendCacheable(
      req,
      res,
      await this.directory.card(handle, cardGeneration(req.header('a2a-version'))),
      CARD_CACHE_CONTROL,
    );
  }

  // The well-known path lets A2A clients that resolve `.well-known/agent-card.json`
  // relative to the agent's URL find the card.
  @Get(':handle/.well-known/agent-card.json')
  @Public({ id: 'getWellKnownAgentCard', summary: 'Read the Agent Card at its well-known path', notes: CARD_NOTES })
  @Returns(200, AgentCardSchema)
  @ApiResponse({ status: 304, description: 'Not modified (the `If-None-Match` ETag matches).' })
  @Refuses({ 404: '`agent_not_found`: no enabled, claimed agent with that handle.' })
  async wellKnownCard(
    @AgentHandle('agent_not_found') handle: string,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    return this.card(handle, req, res);
  }
}
