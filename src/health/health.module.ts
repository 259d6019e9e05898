import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module';
import { LimitsModule } from '../limits/limits.module';
import { HealthController } from './health.controller';

@Module({ imports: [EventsModule, LimitsModule], controllers: [HealthController] })
export class HealthModule {}
