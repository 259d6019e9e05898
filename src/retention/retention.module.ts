import { Global, Module } from '@nestjs/common';
import { AdmissionRepository } from '../admission/admission.repository';
import { ConsoleRepository } from '../console/console.repository';
import { DeliveriesRepository } from '../events/deliveries.repository';
import { OutboxRepository } from '../events/outbox.repository';
import { IdempotencyRepository } from '../ledger/idempotency.repository';
import { KeysModule } from '../keys/keys.module';
import { RetentionService } from './retention.service';

/**
 * Retention: schedules the owners' prune statements (RetentionService). Global and
 * importing only KeysModule (which needs nothing of it), so any module — the audit log — can inject RetentionService to
 * register its own kind without an import cycle; the owners' repositories take only
 * the (global) Database, so they are provided here as EventsModule provides its reads.
 */
@Global()
@Module({
  // KeysService writes the key expiry notices (events and all), so it comes whole from its module.
  imports: [KeysModule],
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
