import { Injectable } from '@nestjs/common';
import { JwtRefused, type DecodedJwt } from '../common/jwt';
import type { KeyPrincipal } from '../common/principal';

/** JWTs of issuers other than the service: refused until an organization trusts their issuer (docs/api.md §17). */
@Injectable()
export class FederatedTokens {
  async verify(_token: DecodedJwt, _arriving: boolean): Promise<KeyPrincipal> {
    throw new JwtRefused('wrong_issuer', 'The token was not issued by this service or a trusted issuer.');
  }
}
