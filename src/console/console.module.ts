import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module';
import { LimitsModule } from '../limits/limits.module';
import { ConsoleController } from './console.controller';
import { ConsoleService } from './console.service';
import { ConsoleRepository } from './console.repository';
import { TeamsController } from './teams.controller';
import { TeamsService } from './teams.service';

@Module({
  imports: [LimitsModule, EventsModule],
  controllers: [ConsoleController, TeamsController],
  providers: [ConsoleRepository, ConsoleService, TeamsService],
  exports: [ConsoleService, ConsoleRepository],
})
export class ConsoleModule {}
