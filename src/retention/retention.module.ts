import { Global, Module } from '@nestjs/common';
import { AdmissionRepository } from '../admission/admission.repository';
import { ConsoleRepository } from '../console/console.repository';
import { DeliveriesRepository } from '../events/deliveries.repository';
import { OutboxRepository } from '../events/outbox.repository';
import { IdempotencyRepository } from '../ledger/idempotency.repository';
import { RetentionService } from './retention.service';

/**
 * Retention: schedules the owners' prune statements (RetentionService). Global and
 * importing nothing, so any module — the audit log — can inject RetentionService to
 * register its own kind without an import cycle; the owners' repositories take only
 * the (global) Database, so they are provided here as EventsModule provides its reads.
 */
@Global()
@Module({
  providers: [
    RetentionService,
    OutboxRepository,
    DeliveriesRepository,
    AdmissionRepository,
    IdempotencyRepository,
    ConsoleRepository,
  ],
  exports: [RetentionService],
})
export class RetentionModule {}
