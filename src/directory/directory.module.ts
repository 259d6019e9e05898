import { Module } from '@nestjs/common';
import { ConsoleModule } from '../console/console.module';
import { IdentitiesModule } from '../identities/identities.module';
import { AgentCardsController } from './agent-cards.controller';
import { DirectoryService } from './directory.service';
import { OrganizationDirectoryController } from './organization-directory.controller';

@Module({
  imports: [IdentitiesModule, ConsoleModule],
  controllers: [AgentCardsController, OrganizationDirectoryController],
  providers: [DirectoryService],
})
export class DirectoryModule {}
