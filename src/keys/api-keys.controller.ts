import { Body, Controller, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal } from '../auth/current-principal.decorator';
import type { ConsolePrincipal, KeyPrincipal, Principal } from '../auth/principal';
import { Surface } from '../auth/surface.decorator';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { MintKeyDto } from './dto/mint-key.dto';
import { ListKeysQuery } from './dto/list-keys.query';
import { UpdateKeyDto } from './dto/update-key.dto';
import { KeysService } from './keys.service';

const KeyId = () => Param('id', new ParseIdPipe('api_key_not_found', 'API key'));

@ApiTags('API keys')
@Controller('api/v1/api-keys')
export class ApiKeysController {
  constructor(private readonly keys: KeysService) {}

  @Post()
  @Surface('keyAdmin', 'Mint a key (Console: admin or agent scope; admin key: agent scope only). The plaintext `key` is returned only here.')
  async mint(@CurrentPrincipal() principal: Principal, @Body() dto: MintKeyDto) {
    const { metadata, key } = await this.keys.mint(principal, dto);
    return { ...metadata, key };
  }

  @Get()
  @Surface('keyAdmin', 'List the organization\'s keys')
  list(@CurrentPrincipal() principal: KeyPrincipal | ConsolePrincipal, @Query() query: ListKeysQuery) {
    return this.keys.list(principal, query);
  }

  @Get(':id')
  @Surface('keyAdmin', 'Read a key\'s metadata')
  get(@CurrentPrincipal() principal: KeyPrincipal | ConsolePrincipal, @KeyId() id: string) {
    return this.keys.get(principal, id);
  }

  @Patch(':id')
  @Surface('console', 'Edit a key\'s label or description')
  update(@CurrentPrincipal() principal: ConsolePrincipal, @KeyId() id: string, @Body() dto: UpdateKeyDto) {
    return this.keys.update(principal, id, dto);
  }

  @Post(':id/revoke')
  @HttpCode(200)
  @Surface('console', 'Revoke a key of the organization')
  revoke(@CurrentPrincipal() principal: ConsolePrincipal, @KeyId() id: string) {
    return this.keys.revoke(principal, id);
  }
}
