import { Global, Module } from '@nestjs/common';
import { AdmissionRepository } from '../admission/admission.repository';
import { ApprovalsModule } from '../approvals/approvals.module';
import { ConsoleRepository } from '../console/console.repository';
import { SsoRepository } from '../console/sso.repository';
import { DeliveriesRepository } from '../events/deliveries.repository';
import { OutboxRepository } from '../events/outbox.repository';
import { IdempotencyRepository } from '../ledger/idempotency.repository';
import { KeysModule } from '../keys/keys.module';
import { UsageRepository } from '../usage/usage.repository';
import { RetentionService } from './retention.service';

/**
 * Retention: schedules the owners' prune statements (RetentionService). Global, so any
 * module — the audit log — can inject RetentionService to register its own kind; it
 * imports only KeysModule and ApprovalsModule (neither injects it). The owners'
 * repositories take only the (global) Database, so they are provided here as
 * EventsModule provides its reads.
 */
@Global()
@Module({
  // KeysService writes the key expiry notices (events and all), and ApprovalsService expires
  // approval requests (tasks rejected, events): each comes whole from its module.
  imports: [KeysModule, ApprovalsModule],
  providers: [
    RetentionService,
    OutboxRepository,
    DeliveriesRepository,
    AdmissionRepository,
    IdempotencyRepository,
    ConsoleRepository,
    SsoRepository,
    UsageRepository,
  ],
  exports: [RetentionService],
})
export class RetentionModule {}
