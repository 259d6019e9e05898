import { Body, Controller, Delete, Get, HttpCode, Patch, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal } from '../auth/current-principal.decorator';
import type { AdminKeyPrincipal, ConsolePrincipal, Principal } from '../auth/principal';
import { Surface } from '../auth/surface.decorator';
import { AgentSignupService } from './agent-signup.service';
import { CardFieldsDto } from './dto/card-fields.dto';
import { ClaimIdentityDto } from './dto/claim-identity.dto';
import { CreateIdentityDto } from './dto/create-identity.dto';
import { UpdateSettingsDto } from './dto/update-settings.dto';
import { AgentHandle } from './handle.pipe';
import { IdentitiesService } from './identities.service';

@ApiTags('Identities')
@Controller('api/v1/identities')
export class IdentitiesController {
  constructor(
    private readonly identities: IdentitiesService,
    private readonly signups: AgentSignupService,
  ) {}

  @Post()
  @Surface('organizationAdmin', 'Create an identity (claimed, receiver disabled); with `mint_key`, also a bound agent key whose plaintext is returned only here')
  create(@CurrentPrincipal() principal: AdminKeyPrincipal | ConsolePrincipal, @Body() dto: CreateIdentityDto) {
    return this.identities.create(principal, dto);
  }

  @Post('claim')
  @HttpCode(200)
  @Surface('console', 'Claim a signed-up agent into your organization with its claim code')
  claim(@CurrentPrincipal() principal: ConsolePrincipal, @Body() dto: ClaimIdentityDto) {
    return this.signups.claim(principal, dto.claim_code);
  }

  @Get(':handle')
  @Surface('identityRead', 'Read an identity (admin key or Console of its organization, or its own key even unclaimed)')
  get(@CurrentPrincipal() principal: Principal, @AgentHandle() handle: string) {
    return this.identities.get(principal, handle);
  }

  @Patch(':handle')
  @Surface('identityWrite', 'Edit the card copy: display_name, description, skills')
  updateCard(@CurrentPrincipal() principal: Principal, @AgentHandle() handle: string, @Body() dto: CardFieldsDto) {
    return this.identities.updateCard(principal, handle, dto);
  }

  @Get(':handle/settings')
  @Surface('ledger', 'Read the settings (SEED-SPEC §5 lists settings among the ledger reads)')
  settings(@CurrentPrincipal() principal: Principal, @AgentHandle() handle: string) {
    return this.identities.getSettings(principal, handle);
  }

  @Patch(':handle/settings')
  @Surface('identityWrite', 'Change settings; publicly_discoverable and filter_mode need an admin key or the Console')
  updateSettings(@CurrentPrincipal() principal: Principal, @AgentHandle() handle: string, @Body() dto: UpdateSettingsDto) {
    return this.identities.updateSettings(principal, handle, dto);
  }

  @Delete(':handle')
  @HttpCode(204)
  @Surface('organizationAdmin', 'Delete an identity: its keys are revoked, its card and protocol give 404, its handle stays reserved')
  remove(@CurrentPrincipal() principal: AdminKeyPrincipal | ConsolePrincipal, @AgentHandle() handle: string) {
    return this.identities.remove(principal, handle);
  }
}
