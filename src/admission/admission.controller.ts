import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal } from '../auth/current-principal.decorator';
import type { AdminKeyPrincipal, ConsolePrincipal } from '../common/principal';
import { Surface } from '../auth/surface.decorator';
import { AdmissionService } from './admission.service';
import { CheckAdmissionDto } from './dto/check-admission.dto';
import { ListDecisionsQuery } from './dto/list-decisions.query';
import { Refuses, Returns } from '../common/api-docs';
import { AdmissionCheckResultSchema, AdmissionDecisionPage } from './admission.view';

@ApiTags('Admission')
@Controller('api/v1/admission')
export class AdmissionController {
  constructor(private readonly admission: AdmissionService) {}

  @Post('check')
  @HttpCode(200)
  @Surface('organizationAdmin', {
    id: 'checkAdmission',
    summary: 'Explain whether a requester may send work to a worker, and why',
    notes: "Only your organization's rules are shown; a refusal decided by the other side reads `denied_by_peer`.",
  })
  @Returns(200, AdmissionCheckResultSchema)
  @Refuses({ 404: '`identity_not_found`: neither side is an identity of your organization, or a handle is unknown.' })
  check(@CurrentPrincipal() principal: AdminKeyPrincipal | ConsolePrincipal, @Body() dto: CheckAdmissionDto) {
    return this.admission.check(principal, dto);
  }

  @Get('decisions')
  @Surface('organizationAdmin', {
    id: 'listAdmissionDecisions',
    summary: 'List admission denials where your organization owns the requester or the worker',
  })
  @Returns(200, AdmissionDecisionPage)
  decisions(@CurrentPrincipal() principal: AdminKeyPrincipal | ConsolePrincipal, @Query() query: ListDecisionsQuery) {
    return this.admission.decisions(principal, query);
  }
}
