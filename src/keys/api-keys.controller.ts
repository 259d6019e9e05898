import { Body, Controller, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal } from '../auth/current-principal.decorator';
import type { ConsolePrincipal, KeyPrincipal, Principal } from '../common/principal';
import { Surface } from '../auth/surface.decorator';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { MintKeyDto } from './dto/mint-key.dto';
import { ListKeysQuery } from './dto/list-keys.query';
import { UpdateKeyDto } from './dto/update-key.dto';
import { KeysService } from './keys.service';
import { Refuses, Returns } from '../common/api-docs';
import { KeyMetadataSchema, KeyPage, MintedKeySchema } from './key-metadata';

const KeyId = () => Param('id', new ParseIdPipe('api_key_not_found', 'API key'));

@ApiTags('API keys')
@Controller('api/v1/api-keys')
export class ApiKeysController {
  constructor(private readonly keys: KeysService) {}

  @Post()
  @Surface('keyAdmin', {
    id: 'mintApiKey',
    summary: 'Mint an API key; the plaintext `key` is returned only here',
    notes:
      'Console sessions mint admin or agent keys; an admin key mints agent keys only (`scope` defaults to `agent`).',
  })
  @Returns(201, MintedKeySchema)
  @Refuses({
    403: '`admin_mint_forbidden`: admin keys are minted from a Console session only; `agent_key_not_allowed`.',
    404: '`identity_not_found`: the scoped identity is not one of your organization.',
    409: '`key_limit_reached`: the identity has the most active keys allowed (20).',
  })
  async mint(@CurrentPrincipal() principal: Principal, @Body() dto: MintKeyDto) {
    const { metadata, key } = await this.keys.mint(principal, dto);
    return { ...metadata, key };
  }

  @Get()
  @Surface('keyAdmin', { id: 'listApiKeys', summary: "List your organization's API keys" })
  @Returns(200, KeyPage)
  list(@CurrentPrincipal() principal: KeyPrincipal | ConsolePrincipal, @Query() query: ListKeysQuery) {
    return this.keys.list(principal, query);
  }

  @Get(':id')
  @Surface('keyAdmin', { id: 'getApiKey', summary: "Read an API key's metadata" })
  @Returns(200, KeyMetadataSchema)
  get(@CurrentPrincipal() principal: KeyPrincipal | ConsolePrincipal, @KeyId() id: string) {
    return this.keys.get(principal, id);
  }

  @Patch(':id')
  @Surface('console', { id: 'updateApiKey', summary: "Edit an API key's label or description" })
  @Returns(200, KeyMetadataSchema)
  update(@CurrentPrincipal() principal: ConsolePrincipal, @KeyId() id: string, @Body() dto: UpdateKeyDto) {
    return this.keys.update(principal, id, dto);
  }

  @Post(':id/revoke')
  @HttpCode(200)
  @Surface('console', { id: 'revokeApiKey', summary: 'Revoke an API key of your organization' })
  @Returns(200, KeyMetadataSchema)
  revoke(@CurrentPrincipal() principal: ConsolePrincipal, @KeyId() id: string) {
    return this.keys.revoke(principal, id);
  }
}
