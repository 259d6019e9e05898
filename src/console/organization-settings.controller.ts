import { Body, Controller, Get, Patch } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal } from '../auth/current-principal.decorator';
import { Surface } from '../auth/surface.decorator';
import { Returns } from '../common/api-docs';
import type { AdminKeyPrincipal, ConsolePrincipal } from '../common/principal';
import { UpdateOrganizationSettingsDto } from './dto/organization-settings.dto';
import { OrganizationSettingsService } from './organization-settings.service';
import { OrganizationSettingsSchema } from './organization-settings.view';

/** The caller's organization's settings (docs/api.md §2, key lifetimes): admin key or Console. */
@ApiTags('Organization')
@Controller('api/v1/organization/settings')
export class OrganizationSettingsController {
  constructor(private readonly settings: OrganizationSettingsService) {}

  @Get()
  @Surface('organizationAdmin', { id: 'getOrganizationSettings', summary: "Read your organization's settings" })
  @Returns(200, OrganizationSettingsSchema)
  get(@CurrentPrincipal() principal: AdminKeyPrincipal | ConsolePrincipal) {
    return this.settings.get(principal);
  }

  @Patch()
  @Surface('organizationAdmin', {
    id: 'updateOrganizationSettings',
    summary: "Change your organization's settings: the longest lifetime of a new API key",
  })
  @Returns(200, OrganizationSettingsSchema)
  update(
    @CurrentPrincipal() principal: AdminKeyPrincipal | ConsolePrincipal,
    @Body() dto: UpdateOrganizationSettingsDto,
  ) {
    return this.settings.update(principal, dto);
  }
}
