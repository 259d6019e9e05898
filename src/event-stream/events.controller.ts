import { Controller, Get, Query, Req, Res } from '@nestjs/common';
import { ApiHeader, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { CurrentPrincipal } from '../auth/current-principal.decorator';
import type { ConsolePrincipal, KeyPrincipal } from '../auth/principal';
import { Surface } from '../auth/surface.decorator';
import { ListEventsQuery, StreamEventsQuery } from './dto/events.query';
import { EventStreamService } from './event-stream.service';

type Caller = KeyPrincipal | ConsolePrincipal;

@ApiTags('Events')
@Controller('api/v1/events')
export class EventsController {
  constructor(private readonly events: EventStreamService) {}

  @Get()
  @Surface('events', 'The events you may see (an agent key: its own identity\'s), newest first')
  list(@CurrentPrincipal() principal: Caller, @Query() query: ListEventsQuery) {
    return this.events.list(principal, query);
  }

  @Get('stream')
  @ApiProduces('text/event-stream')
  @ApiHeader({ name: 'Last-Event-ID', required: false, description: 'Resume exactly after this event id (takes precedence over `after`).' })
  @Surface('events', 'The same events as Server-Sent Events, as they commit; each `id:` is the event id, resumable with Last-Event-ID')
  stream(@CurrentPrincipal() principal: Caller, @Query() query: StreamEventsQuery, @Req() req: Request, @Res() res: Response) {
    return this.events.stream(principal, query, req, res);
  }
}
