import { Controller, Get, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal } from '../auth/current-principal.decorator';
import type { Principal } from '../common/principal';
import { Surface } from '../auth/surface.decorator';
import { DirectoryService } from './directory.service';
import { OrganizationDirectoryQuery } from './dto/organization-directory.query';
import { Returns } from '../common/api-docs';
import { IdentityPage } from '../identities/identity.view';

/** The organization directory's path (docs/api.md §4). */
@ApiTags('Discovery')
@Controller('api/v1/identities/a2a/directory')
export class OrganizationDirectoryController {
  constructor(private readonly directory: DirectoryService) {}

  @Get()
  @Surface('organizationDirectory', {
    id: 'listOrganizationDirectory',
    summary: 'List every identity of your organization, whatever its state',
  })
  @Returns(200, IdentityPage)
  list(@CurrentPrincipal() principal: Principal, @Query() query: OrganizationDirectoryQuery) {
    return this.directory.organizationDirectory(principal, query);
  }
}
