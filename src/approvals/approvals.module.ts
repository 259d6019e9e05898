import { Module } from '@nestjs/common';
import { AdmissionModule } from '../admission/admission.module';
import { ConsoleModule } from '../console/console.module';
import { EventsModule } from '../events/events.module';
import { LedgerModule } from '../ledger/ledger.module';
import { UpstreamModule } from '../upstream/upstream.module';
import { ApprovalsController } from './approvals.controller';
import { ApprovalsRepository } from './approvals.repository';
import { ApprovalsService } from './approvals.service';

/** Approval requests (docs/api.md §16): holding new tasks for a person's decision, the decisions, their expiry. */
@Module({
  imports: [AdmissionModule, ConsoleModule, EventsModule, LedgerModule, UpstreamModule],
  controllers: [ApprovalsController],
  providers: [ApprovalsRepository, ApprovalsService],
  exports: [ApprovalsService],
})
export class ApprovalsModule {}
