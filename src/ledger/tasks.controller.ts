import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiHeader, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal } from '../auth/current-principal.decorator';
import type { Principal } from '../common/principal';
import { Surface } from '../auth/surface.decorator';
import { PageQuery } from '../common/pagination';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { HistoryQuery, ListTasksQuery } from './dto/list-tasks.query';
import { ReplyDto } from './dto/reply.dto';
import { IdempotencyKeyHeader } from './idempotency';
import { TasksService } from './tasks.service';
import { TaskTreeService } from './task-tree.service';
import { TaskTreeSchema } from './task-tree.view';
import { TreeQuery } from './dto/tree.query';
import { Refuses, Returns } from '../common/api-docs';
import { MessagePage, TaskPage, TaskSchema } from './ledger.view';

const TaskId = () => Param('id', new ParseIdPipe('task_not_found', 'task'));

@ApiTags('Ledger')
@Controller('api/v1/tasks')
export class TasksController {
  constructor(
    private readonly tasks: TasksService,
    private readonly trees: TaskTreeService,
  ) {}

  @Get()
  @Surface('ledger', {
    id: 'listTasks',
    summary: 'List the tasks you take part in, newest first',
    notes: 'Filters: role, state, context_id, peer, identity, updated_after.',
  })
  @Returns(200, TaskPage)
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListTasksQuery) {
    return this.tasks.list(principal, query);
  }

  @Get(':id')
  @Surface('ledger', { id: 'getTask', summary: 'Read a task with its recent history and artifacts' })
  @Returns(200, TaskSchema)
  get(@CurrentPrincipal() principal: Principal, @TaskId() id: string, @Query() query: HistoryQuery) {
    return this.tasks.get(principal, id, query);
  }

  @Get(':id/tree')
  @Surface('ledger', {
    id: 'getTaskTree',
    summary: 'Read the delegation tree around a task: its ancestors, its descendants and their usage',
    notes:
      'Nodes of tasks you may not read are opaque: their state and usage only. `totals` covers the whole tree from its root.',
  })
  @Returns(200, TaskTreeSchema)
  tree(@CurrentPrincipal() principal: Principal, @TaskId() id: string, @Query() query: TreeQuery) {
    return this.trees.tree(principal, id, query);
  }

  @Get(':id/messages')
  @Surface('ledger', { id: 'listTaskMessages', summary: "List a task's messages, newest first" })
  @Returns(200, MessagePage)
  messages(@CurrentPrincipal() principal: Principal, @TaskId() id: string, @Query() query: PageQuery) {
    return this.tasks.messages(principal, id, query);
  }

  @Post(':id/reply')
  @HttpCode(200)
  @ApiHeader({
    name: 'Idempotency-Key',
    required: false,
    description: 'Replays the first response to the same key and body for 24 h.',
  })
  @Surface('ledger', {
    id: 'replyToTask',
    summary: "Reply as the task's worker: a new state, a message and/or artifacts",
    notes:
      'Send an `Idempotency-Key` header to make retries safe: the same key and body replayed return the first response.',
  })
  @Returns(200, TaskSchema)
  @Refuses({
    403: "`not_task_worker`: only the task's worker side may reply.",
    409: '`task_terminal`, `invalid_transition`, `task_message_limit`, `artifact_closed`, `artifact_not_found`.',
  })
  reply(
    @CurrentPrincipal() principal: Principal,
    @TaskId() id: string,
    @Body() dto: ReplyDto,
    @IdempotencyKeyHeader() key?: string,
  ) {
    return this.tasks.reply(principal, id, dto, key);
  }
}
