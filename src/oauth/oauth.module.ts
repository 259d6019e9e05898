import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DirectoryModule } from '../directory/directory.module';
import { KeysModule } from '../keys/keys.module';
import { FederatedTokens } from './federated-tokens';
import { IssuerKeys } from './issuer-keys';
import { OAuthController } from './oauth.controller';
import { TokenVerifier } from './token-verifier';
import { TokenService } from './token.service';
import { TrustedIssuer } from './trusted-issuer.entity';
import { TrustedIssuersController } from './trusted-issuers.controller';
import { TrustedIssuersRepository } from './trusted-issuers.repository';
import { TrustedIssuersService } from './trusted-issuers.service';

/** Access tokens for API keys, and trusted issuers' JWTs (docs/api.md §17). */
@Module({
  imports: [TypeOrmModule.forFeature([TrustedIssuer]), KeysModule, DirectoryModule],
  controllers: [OAuthController, TrustedIssuersController],
  providers: [
    TokenService,
    TokenVerifier,
    FederatedTokens,
    IssuerKeys,
    TrustedIssuersRepository,
    TrustedIssuersService,
  ],
  exports: [TokenVerifier],
})
export class OAuthModule {}
