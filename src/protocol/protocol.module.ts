import { Module } from '@nestjs/common';
import { AdmissionModule } from '../admission/admission.module';
import { IdentitiesModule } from '../identities/identities.module';
import { KeysModule } from '../keys/keys.module';
import { LedgerModule } from '../ledger/ledger.module';
import { LedgerRequestHandler } from './ledger-request-handler';
import { ProtocolController } from './protocol.controller';
import { ProtocolService } from './protocol.service';

/** `POST /a2a/{handle}`: A2A JSON-RPC (v1.0 and v0.3) over the ledger. */
@Module({
  imports: [IdentitiesModule, AdmissionModule, LedgerModule, KeysModule],
  controllers: [ProtocolController],
  providers: [ProtocolService, LedgerRequestHandler],
})
export class ProtocolModule {}
