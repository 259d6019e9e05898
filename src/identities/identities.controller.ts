import { Body, Controller, Delete, Get, HttpCode, Patch, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal } from '../auth/current-principal.decorator';
import type { AdminKeyPrincipal, ConsolePrincipal, Principal } from '../common/principal';
import { Surface } from '../auth/surface.decorator';
import { AgentSignupService } from './agent-signup.service';
import { CardFieldsDto } from './dto/card-fields.dto';
import { ClaimIdentityDto } from './dto/claim-identity.dto';
import { CreateIdentityDto } from './dto/create-identity.dto';
import { UpdateSettingsDto } from './dto/update-settings.dto';
import { AgentHandle } from './handle.pipe';
import { IdentitiesService } from './identities.service';
import { Refuses, Returns } from '../common/api-docs';
import { CreatedIdentitySchema, IdentitySchema, SettingsSchema } from './identity.view';

@ApiTags('Identities')
@Controller('api/v1/identities')
export class IdentitiesController {
  constructor(
    private readonly identities: IdentitiesService,
    private readonly signups: AgentSignupService,
  ) {}

  @Post()
  @Surface('organizationAdmin', {
    id: 'createIdentity',
    summary: 'Create an identity; with `mint_key`, also its first agent key',
    notes:
      "The identity is claimed by your organization at once, its receiver disabled. The key's plaintext is returned only here.",
  })
  @Returns(201, CreatedIdentitySchema)
  @Refuses({ 409: '`handle_taken`: handles are never reused, even after deletion.' })
  create(@CurrentPrincipal() principal: AdminKeyPrincipal | ConsolePrincipal, @Body() dto: CreateIdentityDto) {
    return this.identities.create(principal, dto);
  }

  @Post('claim')
  @HttpCode(200)
  @Surface('console', {
    id: 'claimIdentity',
    summary: 'Claim a signed-up agent into your organization with its claim code',
  })
  @Returns(200, IdentitySchema)
  @Refuses({ 404: '`claim_code_invalid`: the code is unknown, already used or expired.' })
  claim(@CurrentPrincipal() principal: ConsolePrincipal, @Body() dto: ClaimIdentityDto) {
    return this.signups.claim(principal, dto.claim_code);
  }

  @Get(':handle')
  @Surface('identityRead', {
    id: 'getIdentity',
    summary: 'Read an identity',
    notes: 'An admin key or Console session of its organization, or its own key (even unclaimed).',
  })
  @Returns(200, IdentitySchema)
  get(@CurrentPrincipal() principal: Principal, @AgentHandle() handle: string) {
    return this.identities.get(principal, handle);
  }

  @Patch(':handle')
  @Surface('identityWrite', { id: 'updateIdentity', summary: 'Edit the card: display name, description, skills' })
  @Returns(200, IdentitySchema)
  @Refuses({ 409: '`identity_deleted`: a deleted identity can be read but not changed.' })
  updateCard(@CurrentPrincipal() principal: Principal, @AgentHandle() handle: string, @Body() dto: CardFieldsDto) {
    return this.identities.updateCard(principal, handle, dto);
  }

  @Get(':handle/settings')
  @Surface('ledger', { id: 'getIdentitySettings', summary: "Read an identity's settings" })
  @Returns(200, SettingsSchema)
  settings(@CurrentPrincipal() principal: Principal, @AgentHandle() handle: string) {
    return this.identities.getSettings(principal, handle);
  }

  @Patch(':handle/settings')
  @Surface('identityWrite', {
    id: 'updateIdentitySettings',
    summary: "Change an identity's settings",
    notes:
      '`publicly_discoverable` and `filter_mode` need an admin key or a Console session; its own key may change the others.',
  })
  @Returns(200, SettingsSchema)
  @Refuses({ 409: '`identity_deleted`: a deleted identity can be read but not changed.' })
  updateSettings(
    @CurrentPrincipal() principal: Principal,
    @AgentHandle() handle: string,
    @Body() dto: UpdateSettingsDto,
  ) {
    return this.identities.updateSettings(principal, handle, dto);
  }

  @Delete(':handle')
  @HttpCode(204)
  @Surface('organizationAdmin', {
    id: 'deleteIdentity',
    summary: 'Delete an identity',
    notes: 'Its keys are revoked, its card and protocol endpoint answer 404, and its handle stays reserved.',
  })
  @Returns(204)
  remove(@CurrentPrincipal() principal: AdminKeyPrincipal | ConsolePrincipal, @AgentHandle() handle: string) {
    return this.identities.remove(principal, handle);
  }
}
