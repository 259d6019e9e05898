import { Controller, Get } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal } from '../auth/current-principal.decorator';
import { Surface } from '../auth/surface.decorator';
import { Refuses, Returns } from '../common/api-docs';
import type { AdminKeyPrincipal, ConsolePrincipal } from '../common/principal';
import { AgentHandle } from '../identities/handle.pipe';
import { CardPreviewSchema } from './card-preview.view';
import { DirectoryService } from './directory.service';

/** An identity's card as its organization previews it (docs/api.md §4, "Card preview"). */
@ApiTags('Discovery')
@Controller('api/v1/identities/:handle/card-preview')
export class CardPreviewController {
  constructor(private readonly directory: DirectoryService) {}

  @Get()
  @Surface('organizationAdmin', {
    id: 'previewAgentCard',
    summary: 'Preview the Agent Card an identity serves, or would serve once enabled, in both generations (unsigned)',
  })
  @Returns(200, CardPreviewSchema)
  @Refuses({ 404: '`identity_not_found`: no identity of your organization has that handle.' })
  preview(@CurrentPrincipal() principal: AdminKeyPrincipal | ConsolePrincipal, @AgentHandle() handle: string) {
    return this.directory.cardPreview(principal, handle);
  }
}
