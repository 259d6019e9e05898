import { Controller, Get, Query, Req, Res } from '@nestjs/common';
import { ApiProperty, ApiResponse, ApiTags } from '@nestjs/swagger';
import { IsString, MaxLength } from 'class-validator';
import type { Request, Response } from 'express';
import { Public } from '../auth/surface.decorator';
import { Returns } from '../common/api-docs';
import { sendCacheable } from '../common/conditional-get';
import { Optional } from '../common/validation';
import { AiCatalogSchema } from './ai-catalog';
import { DirectoryService } from './directory.service';

export class AiCatalogQuery {
  @ApiProperty({ required: false, description: "A page after the first: the URL of the previous page's last entry." })
  @Optional()
  @IsString()
  @MaxLength(512)
  cursor?: string;
}

/** The public directory as an AI Catalog (docs/api.md §4, "AI Catalog"); cached as cards are. */
@ApiTags('Discovery')
@Controller('.well-known')
export class AiCatalogController {
  constructor(private readonly directory: DirectoryService) {}

  @Get('ai-catalog.json')
  @Public({
    id: 'getAiCatalog',
    summary: 'Read the public directory as an AI Catalog (application/ai-catalog+json, specification 0.9)',
    notes:
      'Served with an ETag and Last-Modified; `If-None-Match` or `If-Modified-Since` gives 304. Cacheable for 60 seconds. ' +
      'Pages of 100 agents; a page that is not the last ends with a nested catalog entry for the next.',
  })
  @Returns(200, AiCatalogSchema)
  @ApiResponse({ status: 304, description: 'Not modified.' })
  async catalog(@Query() query: AiCatalogQuery, @Req() req: Request, @Res() res: Response): Promise<void> {
    sendCacheable(req, res, await this.directory.aiCatalog(query.cursor), 'public, max-age=60');
  }
}
