import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { EventsModule } from '../events/events.module';
import { KeysModule } from '../keys/keys.module';
import { AgentSignupController } from './agent-signup.controller';
import { AgentSignupService } from './agent-signup.service';
import { IdentitiesController } from './identities.controller';
import { IdentitiesRepository } from './identities.repository';
import { RankedSearchRepository } from './ranked-search.repository';
import { IdentitiesService } from './identities.service';
import { IdentitySearchService } from './identity-search.service';
import { IdentityNameWord } from './identity-name-word.entity';
import { IdentitySearchTerm } from './identity-search-term.entity';
import { Identity } from './identity.entity';

@Module({
  imports: [TypeOrmModule.forFeature([Identity, IdentityNameWord, IdentitySearchTerm]), KeysModule, EventsModule],
  controllers: [IdentitiesController, AgentSignupController],
  providers: [
    IdentitiesRepository,
    RankedSearchRepository,
    IdentitiesService,
    AgentSignupService,
    IdentitySearchService,
  ],
  exports: [IdentitiesRepository, IdentitiesService, IdentitySearchService],
})
export class IdentitiesModule {}
