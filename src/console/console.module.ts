import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module';
import { LimitsModule } from '../limits/limits.module';
import { ConsoleController } from './console.controller';
import { ConsoleService } from './console.service';
import { ConsoleRepository } from './console.repository';
import { OrganizationSettingsController } from './organization-settings.controller';
import { OrganizationSettingsService } from './organization-settings.service';
import { TeamsController } from './teams.controller';
import { TeamsService } from './teams.service';
import { OidcClient } from './oidc-client';
import { SsoController } from './sso.controller';
import { SsoRepository } from './sso.repository';
import { SsoService } from './sso.service';

@Module({
  imports: [LimitsModule, EventsModule],
  controllers: [ConsoleController, TeamsController, OrganizationSettingsController, SsoController],
  providers: [
    ConsoleRepository,
    ConsoleService,
    TeamsService,
    OrganizationSettingsService,
    SsoRepository,
    OidcClient,
    SsoService,
  ],
  exports: [ConsoleService, ConsoleRepository],
})
export class ConsoleModule {}
