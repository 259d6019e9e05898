import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { AppError, badRequest } from '../common/app-error';
import type { KeyPrincipal } from '../common/principal';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { CardSigner } from '../directory/card-signer';
import { KeysService } from '../keys/keys.service';
import { invalidClient, type TokenRequest } from './token-request';

/** The body of a token response (RFC 6749 §5.1). */
export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  scope: KeyPrincipal['kind'];
}

/**
 * Issues access tokens for API keys (docs/api.md §17, RFC 6749 §4.4 client credentials):
 * the key is the client's secret and its id the client id. The token is a JWT of
 * RFC 9068's profile signed by the service's key (CardSigner), naming the key as
 * `sub` and `client_id` and its scope as `scope`; it carries no other state, so what
 * it may do is read again from its key on every request (TokenVerifier).
 */
@Injectable()
export class TokenService {
  private readonly issuer: string;

  constructor(
    private readonly keys: KeysService,
    private readonly signer: CardSigner,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.issuer = config.publicBaseUrl;
  }

  async issue(request: TokenRequest): Promise<TokenResponse> {
    const principal = await this.client(request);
    if (request.scope !== undefined && request.scope !== principal.kind) {
      throw badRequest('invalid_scope', `This key's tokens have the key's own scope, ${principal.kind}.`);
    }
    const now = Math.floor(Date.now() / 1000);
    let exp = now + this.config.oauthTokenTtlSeconds;
    // A token is refused once its key has expired anyway; its `exp` says so from the start.
    const keyExpiry = principal.kind === 'agent' ? principal.expiresAt : undefined;
    if (keyExpiry) {
      exp = Math.max(now + 1, Math.min(exp, Math.floor(keyExpiry.getTime() / 1000)));
    }
    const accessToken = await this.signer.signToken({
      iss: this.issuer,
      sub: principal.id,
      aud: this.issuer,
      client_id: principal.id,
      scope: principal.kind,
      iat: now,
      exp,
      jti: randomUUID(),
    });
    this.keys.used(principal);
    return { access_token: accessToken, token_type: 'Bearer', expires_in: exp - now, scope: principal.kind };
  }

  /** The key the client authenticates with, active and with that id; `invalid_client` otherwise. */
  private async client(request: TokenRequest): Promise<KeyPrincipal> {
    let principal: KeyPrincipal | null;
    try {
      principal = await this.keys.verify(request.clientSecret);
    } catch (error) {
      if (error instanceof AppError && error.code === 'api_key_expired') {
        throw invalidClient('The API key has expired; mint a new one.');
      }
      throw error;
    }
    if (!principal || principal.id !== request.clientId) {
      throw invalidClient('client_id and client_secret are not the id and the plaintext of an active API key.');
    }
    return principal;
  }
}
