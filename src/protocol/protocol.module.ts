import { Module } from '@nestjs/common';
import { AdmissionModule } from '../admission/admission.module';
import { ApprovalsModule } from '../approvals/approvals.module';
import { DirectoryModule } from '../directory/directory.module';
import { EventsModule } from '../events/events.module';
import { IdentitiesModule } from '../identities/identities.module';
import { KeysModule } from '../keys/keys.module';
import { LedgerModule } from '../ledger/ledger.module';
import { LimitsModule } from '../limits/limits.module';
import { UpstreamModule } from '../upstream/upstream.module';
import { LedgerRequestHandler } from './ledger-request-handler';
import { ProtocolController } from './protocol.controller';
import { GrpcBindingService } from './grpc-binding.service';
import { ProtocolGate } from './protocol-gate';
import { UsageModule } from '../usage/usage.module';
import { RestBindingController } from './rest-binding.controller';
import { RestBindingService } from './rest-binding.service';
import { ProtocolService } from './protocol.service';
import { A2APushNotificationRenderer } from './push-notification-renderer';

/** A2A over the ledger (v1.0 and v0.3): JSON-RPC at `POST /a2a/{handle}`, HTTP+JSON under `/a2a/{handle}/rest`, gRPC on GRPC_PORT. */
@Module({
  imports: [
    IdentitiesModule,
    AdmissionModule,
    ApprovalsModule,
    LedgerModule,
    KeysModule,
    EventsModule,
    DirectoryModule,
    LimitsModule,
    UpstreamModule,
    UsageModule,
  ],
  controllers: [ProtocolController, RestBindingController],
  providers: [
    ProtocolGate,
    ProtocolService,
    RestBindingService,
    GrpcBindingService,
    LedgerRequestHandler,
    A2APushNotificationRenderer,
  ],
})
export class ProtocolModule {}
