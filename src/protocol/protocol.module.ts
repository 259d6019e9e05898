import { Module } from '@nestjs/common';
import { AdmissionModule } from '../admission/admission.module';
import { EventsModule } from '../events/events.module';
import { IdentitiesModule } from '../identities/identities.module';
import { KeysModule } from '../keys/keys.module';
import { LedgerModule } from '../ledger/ledger.module';
import { LimitsModule } from '../limits/limits.module';
import { UpstreamModule } from '../upstream/upstream.module';
import { LedgerRequestHandler } from './ledger-request-handler';
import { ProtocolController } from './protocol.controller';
import { ProtocolService } from './protocol.service';
import { A2APushNotificationRenderer } from './push-notification-renderer';

/** `POST /a2a/{handle}`: A2A JSON-RPC (v1.0 and v0.3) over the ledger. */
@Module({
  imports: [IdentitiesModule, AdmissionModule, LedgerModule, KeysModule, EventsModule, LimitsModule, UpstreamModule],
  controllers: [ProtocolController],
  providers: [ProtocolService, LedgerRequestHandler, A2APushNotificationRenderer],
})
export class ProtocolModule {}
