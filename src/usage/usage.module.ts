import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { TaskUsage } from './entities/task-usage.entity';
import { UsageCounter } from './entities/usage-counter.entity';
import { UsageHourly } from './entities/usage-hourly.entity';
import { ConsoleModule } from '../console/console.module';
import { EventsModule } from '../events/events.module';
import { IdentitiesModule } from '../identities/identities.module';
import { UsageController } from './usage.controller';
import { UsageMeter } from './usage-meter';
import { UsageRepository } from './usage.repository';
import { UsageService } from './usage.service';

/**
 * Usage and budgets (docs/api.md §18): the usage tables, the meter the ledger and the
 * protocol write through (UsageMeter), and `GET /api/v1/usage`. Budgets are identity
 * settings; the counters that enforce them are here.
 */
@Module({
  imports: [
    TypeOrmModule.forFeature([TaskUsage, UsageHourly, UsageCounter]),
    EventsModule,
    IdentitiesModule,
    ConsoleModule,
  ],
  controllers: [UsageController],
  providers: [UsageRepository, UsageMeter, UsageService],
  exports: [UsageMeter, UsageRepository],
})
export class UsageModule {}
