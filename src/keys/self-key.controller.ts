import { Controller, Get, HttpCode, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal } from '../auth/current-principal.decorator';
import type { KeyPrincipal } from '../common/principal';
import { Surface } from '../auth/surface.decorator';
import { KeysService } from './keys.service';
import { Returns } from '../common/api-docs';
import { KeyMetadataSchema } from './key-metadata';

/** The unversioned paths of a key's own routes (docs/api.md §2: read itself, revoke itself). */
@ApiTags('API keys')
@Controller('api-keys/self')
export class SelfKeyController {
  constructor(private readonly keys: KeysService) {}

  @Get()
  @Surface('keySelf', { id: 'getSelfKey', summary: "Read the calling key's metadata (never its plaintext)" })
  @Returns(200, KeyMetadataSchema)
  self(@CurrentPrincipal() principal: KeyPrincipal) {
    return this.keys.self(principal);
  }

  @Post('revoke')
  @HttpCode(200)
  @Surface('keySelf', { id: 'revokeSelfKey', summary: 'Revoke the calling key, permanently' })
  @Returns(200, KeyMetadataSchema)
  revoke(@CurrentPrincipal() principal: KeyPrincipal) {
    return this.keys.revokeSelf(principal);
  }
}
