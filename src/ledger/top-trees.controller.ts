import { Controller, Get, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal } from '../auth/current-principal.decorator';
import { Surface } from '../auth/surface.decorator';
import { Returns } from '../common/api-docs';
import type { Principal } from '../common/principal';
import { TopTreesQuery } from './dto/top-trees.query';
import { TaskTreeService } from './task-tree.service';
import { TopTreesSchema } from './task-tree.view';

/** The largest delegation trees of a range (docs/api.md §18): usage's view of the ledger's trees. */
@ApiTags('Usage')
@Controller('api/v1/usage/trees')
export class TopTreesController {
  constructor(private readonly trees: TaskTreeService) {}

  @Get()
  @Surface('ledger', {
    id: 'listTopTrees',
    summary: 'The largest delegation trees whose root was created in a range, with their totals',
    notes: 'Trees whose root task you may read, by their tasks then reported tokens; `limit` 1–50 (default 10).',
  })
  @Returns(200, TopTreesSchema)
  list(@CurrentPrincipal() principal: Principal, @Query() query: TopTreesQuery) {
    return this.trees.topTrees(principal, query);
  }
}
