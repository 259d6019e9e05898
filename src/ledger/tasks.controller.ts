import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiHeader, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal } from '../auth/current-principal.decorator';
import type { Principal } from '../auth/principal';
import { Surface } from '../auth/surface.decorator';
import { PageQuery } from '../common/pagination';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { HistoryQuery, ListTasksQuery } from './dto/list-tasks.query';
import { ReplyDto } from './dto/reply.dto';
import { IdempotencyKeyHeader } from './idempotency';
import { TasksService } from './tasks.service';

const TaskId = () => Param('id', new ParseIdPipe('task_not_found', 'task'));

@ApiTags('Ledger')
@Controller('api/v1/tasks')
export class TasksController {
  constructor(private readonly tasks: TasksService) {}

  @Get()
  @Surface('ledger', 'List the tasks you take part in, newest first (filters: role, state, context_id, peer, identity, updated_after)')
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListTasksQuery) {
    return this.tasks.list(principal, query);
  }

  @Get(':id')
  @Surface('ledger', 'Read a task: A2A shape plus requester, worker, created_at, updated_at')
  get(@CurrentPrincipal() principal: Principal, @TaskId() id: string, @Query() query: HistoryQuery) {
    return this.tasks.get(principal, id, query);
  }

  @Get(':id/messages')
  @Surface('ledger', 'A task\'s messages, newest first')
  messages(@CurrentPrincipal() principal: Principal, @TaskId() id: string, @Query() query: PageQuery) {
    return this.tasks.messages(principal, id, query);
  }

  @Post(':id/reply')
  @HttpCode(200)
  @ApiHeader({ name: 'Idempotency-Key', required: false, description: 'Replays the first response to the same key and body for 24 h.' })
  @Surface('ledger', 'Reply as the task\'s worker: a new state, a message and/or artifacts')
  reply(@CurrentPrincipal() principal: Principal, @TaskId() id: string, @Body() dto: ReplyDto, @IdempotencyKeyHeader() key?: string) {
    return this.tasks.reply(principal, id, dto, key);
  }
}
