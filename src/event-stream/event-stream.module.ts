import { Module } from '@nestjs/common';
import { ConsoleModule } from '../console/console.module';
import { EventsModule } from '../events/events.module';
import { KeysModule } from '../keys/keys.module';
import { LimitsModule } from '../limits/limits.module';
import { EventsController } from './events.controller';
import { EventStreamService } from './event-stream.service';

/**
 * The event list and stream (docs/api.md §14). Above the events module, which owns the
 * outbox and its reads (EventFeed), because an open stream re-checks its caller's
 * key or session (Keys, Console import Events to emit).
 */
@Module({
  imports: [EventsModule, KeysModule, ConsoleModule, LimitsModule],
  controllers: [EventsController],
  providers: [EventStreamService],
})
export class EventStreamModule {}
