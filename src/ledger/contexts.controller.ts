import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal } from '../auth/current-principal.decorator';
import type { Principal } from '../auth/principal';
import { Surface } from '../auth/surface.decorator';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { ListContextsQuery } from './dto/list-tasks.query';
import { TasksService } from './tasks.service';

@ApiTags('Ledger')
@Controller('api/v1/contexts')
export class ContextsController {
  constructor(private readonly tasks: TasksService) {}

  @Get()
  @Surface('ledger', 'List the contexts you take part in, newest first (filters: role, peer, identity)')
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListContextsQuery) {
    return this.tasks.listContexts(principal, query);
  }

  @Get(':id')
  @Surface('ledger', 'Read a context with its most recent tasks')
  get(@CurrentPrincipal() principal: Principal, @Param('id', new ParseIdPipe('context_not_found', 'context')) id: string) {
    return this.tasks.getContext(principal, id);
  }
}
