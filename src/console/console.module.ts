import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { EventsModule } from '../events/events.module';
import { LimitsModule } from '../limits/limits.module';
import { ConsoleController } from './console.controller';
import { ConsoleService } from './console.service';
import { ConsoleInvite } from './console-invite.entity';
import { ConsoleSession } from './console-session.entity';
import { ConsoleUser } from './console-user.entity';
import { Organization } from './organization.entity';
import { TeamsController } from './teams.controller';
import { TeamsService } from './teams.service';

@Module({
  imports: [TypeOrmModule.forFeature([Organization, ConsoleUser, ConsoleSession, ConsoleInvite]), LimitsModule, EventsModule],
  controllers: [ConsoleController, TeamsController],
  providers: [ConsoleService, TeamsService],
  exports: [ConsoleService],
})
export class ConsoleModule {}
