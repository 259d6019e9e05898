import { Controller, Get, Header } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Public } from '../auth/surface.decorator';
import { Returns } from '../common/api-docs';
import { CardSigner, type PublicJwk } from './card-signer';
import { JwkSetSchema } from './jwks.view';

/** The public keys that verify Agent Card signatures (docs/api.md §4). */
@ApiTags('Discovery')
@Controller('.well-known')
export class JwksController {
  constructor(private readonly signer: CardSigner) {}

  @Get('jwks.json')
  @Header('Cache-Control', 'public, max-age=60')
  @Public({
    id: 'getCardSigningKeys',
    summary: 'Get the public keys that verify Agent Card signatures: the current key and the previous one',
    notes: 'Cacheable for 60 seconds.',
  })
  @Returns(200, JwkSetSchema)
  jwks(): Promise<{ keys: PublicJwk[] }> {
    return this.signer.jwks();
  }
}
