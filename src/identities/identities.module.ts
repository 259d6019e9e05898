import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { KeysModule } from '../keys/keys.module';
import { AgentSignupController } from './agent-signup.controller';
import { AgentSignupService } from './agent-signup.service';
import { IdentitiesController } from './identities.controller';
import { IdentitiesService } from './identities.service';
import { IdentitySearchService } from './identity-search.service';
import { Identity } from './identity.entity';

@Module({
  imports: [TypeOrmModule.forFeature([Identity]), KeysModule],
  controllers: [IdentitiesController, AgentSignupController],
  providers: [IdentitiesService, AgentSignupService, IdentitySearchService],
  exports: [IdentitiesService, IdentitySearchService],
})
export class IdentitiesModule {}
