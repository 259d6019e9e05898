import { Controller, Get, HttpCode, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal } from '../auth/current-principal.decorator';
import type { KeyPrincipal } from '../auth/principal';
import { Surface } from '../auth/surface.decorator';
import { KeysService } from './keys.service';

/** The unversioned paths fixed by SEED-SPEC §4. */
@ApiTags('API keys')
@Controller('api-keys/self')
export class SelfKeyController {
  constructor(private readonly keys: KeysService) {}

  @Get()
  @Surface('keySelf', 'Metadata of the calling key (never its plaintext)')
  self(@CurrentPrincipal() principal: KeyPrincipal) {
    return this.keys.self(principal);
  }

  @Post('revoke')
  @HttpCode(200)
  @Surface('keySelf', 'Revoke the calling key, permanently')
  revoke(@CurrentPrincipal() principal: KeyPrincipal) {
    return this.keys.revokeSelf(principal);
  }
}
