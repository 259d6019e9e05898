import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal } from '../auth/current-principal.decorator';
import type { Principal } from '../common/principal';
import { Surface } from '../auth/surface.decorator';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { ListContextsQuery } from './dto/list-tasks.query';
import { TasksService } from './tasks.service';
import { Returns } from '../common/api-docs';
import { ContextPage, ContextWithTasksSchema } from './ledger.view';

@ApiTags('Ledger')
@Controller('api/v1/contexts')
export class ContextsController {
  constructor(private readonly tasks: TasksService) {}

  @Get()
  @Surface('ledger', {
    id: 'listContexts',
    summary: 'List the contexts you take part in, newest first',
    notes: 'Filters: role, peer, identity.',
  })
  @Returns(200, ContextPage)
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListContextsQuery) {
    return this.tasks.listContexts(principal, query);
  }

  @Get(':id')
  @Surface('ledger', { id: 'getContext', summary: 'Read a context with its most recent tasks' })
  @Returns(200, ContextWithTasksSchema)
  get(
    @CurrentPrincipal() principal: Principal,
    @Param('id', new ParseIdPipe('context_not_found', 'context')) id: string,
  ) {
    return this.tasks.getContext(principal, id);
  }
}
