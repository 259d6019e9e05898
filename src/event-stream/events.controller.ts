import { Controller, Get, Query, Req, Res } from '@nestjs/common';
import { ApiHeader, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { CurrentPrincipal } from '../auth/current-principal.decorator';
import type { ConsolePrincipal, KeyPrincipal } from '../common/principal';
import { Surface } from '../auth/surface.decorator';
import { Refuses, Returns } from '../common/api-docs';
import { EventPage } from '../events/event.view';
import { ListEventsQuery, StreamEventsQuery } from './dto/events.query';
import { EventStreamService } from './event-stream.service';

type Caller = KeyPrincipal | ConsolePrincipal;

@ApiTags('Events')
@Controller('api/v1/events')
export class EventsController {
  constructor(private readonly events: EventStreamService) {}

  @Get()
  @Surface('events', {
    id: 'listEvents',
    summary: 'List the events you may see, newest first',
    notes: "An admin key or Console session sees its organization's events; an agent key, only its own identity's.",
  })
  @Returns(200, EventPage)
  @Refuses({
    400: '`unknown_event`: `after` names no event you can see (it may be older than the retention period); other fields: `validation_failed`.',
  })
  list(@CurrentPrincipal() principal: Caller, @Query() query: ListEventsQuery) {
    return this.events.list(principal, query);
  }

  @Get('stream')
  @ApiHeader({
    name: 'Last-Event-ID',
    required: false,
    description: 'Resume exactly after this event id (takes precedence over `after`).',
  })
  @Surface('events', {
    id: 'streamEvents',
    summary: 'Follow the events you may see as they happen (Server-Sent Events), resumable with Last-Event-ID',
    notes:
      'Each event is one `data:` line (an Event, as in the list) whose `id:` is the event id. ' +
      'A key revoked or a session ended while the stream is open ends it with an `event: error` carrying the problem.',
  })
  @ApiResponse({
    status: 200,
    description: 'A stream of events, from now on or after the one named, until the client disconnects.',
    content: {
      'text/event-stream': {
        schema: {
          type: 'string',
          description:
            'Server-sent events: each `data:` line is an Event (`#/components/schemas/Event`), its `id:` the event id.',
        },
      },
    },
  })
  @Refuses({
    400: '`unknown_event`: `after` names no event you can see; `invalid_last_event_id`: Last-Event-ID is not an event id; other fields: `validation_failed`.',
    429: '`too_many_open_calls`: this credential already holds its share of open streams and blocking sends; or the rate limit is exceeded (see `Retry-After`).',
  })
  stream(
    @CurrentPrincipal() principal: Caller,
    @Query() query: StreamEventsQuery,
    @Req() req: Request,
    @Res() res: Response,
  ) {
    return this.events.stream(principal, query, req, res);
  }
}
