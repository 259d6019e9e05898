import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal } from '../auth/current-principal.decorator';
import type { AdminKeyPrincipal, ConsolePrincipal } from '../auth/principal';
import { Surface } from '../auth/surface.decorator';
import { AdmissionService } from './admission.service';
import { CheckAdmissionDto } from './dto/check-admission.dto';
import { ListDecisionsQuery } from './dto/list-decisions.query';

@ApiTags('Admission')
@Controller('api/v1/admission')
export class AdmissionController {
  constructor(private readonly admission: AdmissionService) {}

  @Post('check')
  @HttpCode(200)
  @Surface('organizationAdmin', 'Explain whether a requester may send work to a worker, showing only your organization\'s rules')
  check(@CurrentPrincipal() principal: AdminKeyPrincipal | ConsolePrincipal, @Body() dto: CheckAdmissionDto) {
    return this.admission.check(principal, dto);
  }

  @Get('decisions')
  @Surface('organizationAdmin', 'Denials recorded on the protocol where your organization owns the requester or the worker')
  decisions(@CurrentPrincipal() principal: AdminKeyPrincipal | ConsolePrincipal, @Query() query: ListDecisionsQuery) {
    return this.admission.decisions(principal, query);
  }
}
