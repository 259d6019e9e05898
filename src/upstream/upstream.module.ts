import { Module } from '@nestjs/common';
import { IdentitiesModule } from '../identities/identities.module';
import { LedgerModule } from '../ledger/ledger.module';
import { LimitsModule } from '../limits/limits.module';
import { PinnedCardKeys } from './pinned-card-keys';
import { UpstreamController } from './upstream.controller';
import { UpstreamForwarder } from './upstream-forwarder';
import { UpstreamsService } from './upstreams.service';
import { UpstreamRepository } from './upstream.repository';

/**
 * Upstream (bridged) identities and the forwarder (docs/api.md §14). Above the ledger,
 * which it writes to as a worker; the protocol module queues forwards in the send's
 * transaction through UpstreamForwarder.queueMessage, and in the cancel's through
 * UpstreamsService.queueCancel.
 */
@Module({
  imports: [IdentitiesModule, LedgerModule, LimitsModule],
  controllers: [UpstreamController],
  providers: [UpstreamRepository, UpstreamsService, UpstreamForwarder, PinnedCardKeys],
  exports: [UpstreamsService, UpstreamForwarder],
})
export class UpstreamModule {}
