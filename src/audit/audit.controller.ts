import { Controller, Get, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal } from '../auth/current-principal.decorator';
import type { AdminKeyPrincipal, ConsolePrincipal } from '../common/principal';
import { Surface } from '../auth/surface.decorator';
import { Returns } from '../common/api-docs';
import { AuditEventPage, toAuditEventPage } from './audit-event.view';
import { AuditService } from './audit.service';
import { ListAuditEventsQuery } from './dto/list-audit-events.query';

@ApiTags('Audit')
@Controller('api/v1/audit-events')
export class AuditController {
  constructor(private readonly audit: AuditService) {}

  @Get()
  @Surface('organizationAdmin', {
    id: 'listAuditEvents',
    summary: "List your organization's audit log, newest first",
    notes:
      'Who changed what: keys, identities, settings, contact rules, webhooks, upstreams, invitations, members, sign-ins. Never a secret.',
  })
  @Returns(200, AuditEventPage)
  async list(
    @CurrentPrincipal() principal: AdminKeyPrincipal | ConsolePrincipal,
    @Query() query: ListAuditEventsQuery,
  ) {
    return toAuditEventPage(await this.audit.list(principal.organizationId, query));
  }
}
