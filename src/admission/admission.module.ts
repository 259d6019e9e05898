import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module';
import { IdentitiesModule } from '../identities/identities.module';
import { AdmissionController } from './admission.controller';
import { AdmissionRepository } from './admission.repository';
import { AdmissionService } from './admission.service';
import { ContactRulesController } from './contact-rules.controller';
import { ContactRulesService } from './contact-rules.service';

@Module({
  imports: [IdentitiesModule, EventsModule],
  controllers: [ContactRulesController, AdmissionController],
  providers: [AdmissionRepository, AdmissionService, ContactRulesService],
  exports: [AdmissionService, ContactRulesService],
})
export class AdmissionModule {}
