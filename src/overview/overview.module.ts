import { Module } from '@nestjs/common';
import { AdmissionModule } from '../admission/admission.module';
import { ApprovalsModule } from '../approvals/approvals.module';
import { EventsModule } from '../events/events.module';
import { KeysModule } from '../keys/keys.module';
import { LedgerModule } from '../ledger/ledger.module';
import { UpstreamModule } from '../upstream/upstream.module';
import { OverviewController } from './overview.controller';
import { OverviewService } from './overview.service';

/**
 * The Console's landing figures (docs/api.md §13, "The overview"). Above every module it
 * reads: each figure is a statement of the module owning the table.
 */
@Module({
  imports: [LedgerModule, AdmissionModule, EventsModule, UpstreamModule, ApprovalsModule, KeysModule],
  controllers: [OverviewController],
  providers: [OverviewService],
})
export class OverviewModule {}
