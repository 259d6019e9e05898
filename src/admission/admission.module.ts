import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { IdentitiesModule } from '../identities/identities.module';
import { AdmissionDecisionRecord } from './admission-decision.entity';
import { AdmissionController } from './admission.controller';
import { AdmissionService } from './admission.service';
import { ContactRule } from './contact-rule.entity';
import { ContactRulesController } from './contact-rules.controller';
import { ContactRulesService } from './contact-rules.service';

@Module({
  imports: [TypeOrmModule.forFeature([ContactRule, AdmissionDecisionRecord]), IdentitiesModule],
  controllers: [ContactRulesController, AdmissionController],
  providers: [AdmissionService, ContactRulesService],
  exports: [AdmissionService],
})
export class AdmissionModule {}
