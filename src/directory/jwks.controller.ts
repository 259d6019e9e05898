import { Controller, Get, Header } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Public } from '../auth/surface.decorator';
import { CardSigner, type PublicJwk } from './card-signer';

/** The public keys that verify Agent Card signatures (CONTRACT §4). */
@ApiTags('Discovery')
@Controller('.well-known')
export class JwksController {
  constructor(private readonly signer: CardSigner) {}

  @Get('jwks.json')
  @Header('Cache-Control', 'public, max-age=60')
  @Public('The JWK Set of the Agent Card signing keys: the current key and the previous one')
  jwks(): Promise<{ keys: PublicJwk[] }> {
    return this.signer.jwks();
  }
}
