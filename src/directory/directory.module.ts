import { Module } from '@nestjs/common';
import { ConsoleModule } from '../console/console.module';
import { IdentitiesModule } from '../identities/identities.module';
import { AgentCardsController } from './agent-cards.controller';
import { AiCatalogController } from './ai-catalog.controller';
import { CardPreviewController } from './card-preview.controller';
import { CardSigner } from './card-signer';
import { DirectoryRepository } from './directory.repository';
import { DirectoryService } from './directory.service';
import { JwksController } from './jwks.controller';
import { OrganizationDirectoryController } from './organization-directory.controller';

@Module({
  imports: [IdentitiesModule, ConsoleModule],
  controllers: [
    AgentCardsController,
    OrganizationDirectoryController,
    CardPreviewController,
    JwksController,
    AiCatalogController,
  ],
  providers: [DirectoryService, CardSigner, DirectoryRepository],
  exports: [DirectoryService, CardSigner],
})
export class DirectoryModule {}
