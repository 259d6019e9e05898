import { Module } from '@nestjs/common';
import { DirectoryModule } from '../directory/directory.module';
import { KeysModule } from '../keys/keys.module';
import { FederatedTokens } from './federated-tokens';
import { OAuthController } from './oauth.controller';
import { TokenVerifier } from './token-verifier';
import { TokenService } from './token.service';

/** Access tokens for API keys and trusted issuers' JWTs (docs/api.md §17). */
@Module({
  imports: [KeysModule, DirectoryModule],
  controllers: [OAuthController],
  providers: [TokenService, TokenVerifier, FederatedTokens],
  exports: [TokenVerifier],
})
export class OAuthModule {}
