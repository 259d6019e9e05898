import { Module } from '@nestjs/common';
import { LedgerModule } from '../ledger/ledger.module';
import { LimitsModule } from '../limits/limits.module';
import { HealthController } from './health.controller';

@Module({ imports: [LedgerModule, LimitsModule], controllers: [HealthController] })
export class HealthModule {}
