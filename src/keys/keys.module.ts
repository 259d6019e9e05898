import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { EventsModule } from '../events/events.module';
import { ApiKey } from './api-key.entity';
import { ApiKeysController } from './api-keys.controller';
import { KeyLookup } from './key-lookup';
import { KeyUsageTracker } from './key-usage.tracker';
import { KeysRepository } from './keys.repository';
import { KeysService } from './keys.service';
import { SelfKeyController } from './self-key.controller';

@Module({
  // BindableIdentities (key-ports.ts) comes from the global PortsModule.
  imports: [TypeOrmModule.forFeature([ApiKey]), EventsModule],
  controllers: [ApiKeysController, SelfKeyController],
  providers: [KeysService, KeysRepository, KeyLookup, KeyUsageTracker],
  exports: [KeysService],
})
export class KeysModule {}
