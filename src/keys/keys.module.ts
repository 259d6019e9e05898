import { forwardRef, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { EventsModule } from '../events/events.module';
import { IdentitiesModule } from '../identities/identities.module';
import { ApiKey } from './api-key.entity';
import { ApiKeysController } from './api-keys.controller';
import { KeyUsageTracker } from './key-usage.tracker';
import { KeysRepository } from './keys.repository';
import { KeysService } from './keys.service';
import { SelfKeyController } from './self-key.controller';

@Module({
  // IdentitiesModule: minting locks the identity a key binds to (IdentitiesRepository); it imports this module back.
  imports: [TypeOrmModule.forFeature([ApiKey]), EventsModule, forwardRef(() => IdentitiesModule)],
  controllers: [ApiKeysController, SelfKeyController],
  providers: [KeysService, KeysRepository, KeyUsageTracker],
  exports: [KeysService],
})
export class KeysModule {}
