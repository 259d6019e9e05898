import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { AppError, badRequest } from '../common/app-error';
import type { KeyPrincipal } from '../common/principal';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { CardSigner } from '../directory/card-signer';
import { KeysService } from '../keys/keys.service';
import {
  ACCESS_TOKEN_TYPE,
  invalidClient,
  type ClientCredentialsRequest,
  type TokenExchangeRequest,
  type TokenRequest,
} from './token-request';
import { TokenVerifier } from './token-verifier';

/** The body of a token response (RFC 6749 §5.1). */
export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  scope: KeyPrincipal['kind'];
  /** A token exchange's answer names what it issued (RFC 8693 §2.2.1). */
  issued_token_type?: typeof ACCESS_TOKEN_TYPE;
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
    private readonly verifier: TokenVerifier,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.issuer = config.publicBaseUrl;
  }

  issue(request: TokenRequest): Promise<TokenResponse> {
    return request.grant === 'token_exchange' ? this.exchange(request) : this.clientCredentials(request);
  }

  private async clientCredentials(request: ClientCredentialsRequest): Promise<TokenResponse> {
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

  /**
   * RFC 8693 token exchange (docs/api.md §17): a trusted issuer's JWT, verified as it is
   * as a bearer token, for a service token that acts as it does — the mapped identity's
   * agent scope — and for no longer than it would (OAUTH_TOKEN_TTL_SECONDS or its `exp`).
   * The token records the trust, its audience and the subject (`trust`) and the identity
   * (`sub`): every request reads them again by the federated token's own lookup
   * (TokenVerifier), so a change of the trust or of the identity ends it at once.
   */
  private async exchange(request: TokenExchangeRequest): Promise<TokenResponse> {
    for (const audience of request.audiences) {
      if (audience !== this.issuer) {
        throw badRequest('invalid_target', `The only audience of the service's tokens is ${this.issuer}.`);
      }
    }
    for (const resource of request.resources) {
      if (resource !== this.issuer && !resource.startsWith(`${this.issuer}/`)) {
        throw badRequest('invalid_target', `The only resource of the service's tokens is the service, ${this.issuer}.`);
      }
    }
    if (request.scope !== undefined && request.scope !== 'agent') {
      throw badRequest('invalid_scope', "A trusted issuer's token acts as its identity's agent scope, agent.");
    }
    let verified: Awaited<ReturnType<TokenVerifier['verifySubjectToken']>>;
    try {
      verified = await this.verifier.verifySubjectToken(request.subjectToken);
    } catch (error) {
      if (error instanceof AppError && error.code === 'invalid_token') {
        throw badRequest('invalid_grant', `The subject token is refused: ${error.detail}`);
      }
      throw error;
    }
    const { principal, subject } = verified;
    const now = Math.floor(Date.now() / 1000);
    const exp = Math.min(now + this.config.oauthTokenTtlSeconds, Math.floor(principal.expiresAt!.getTime() / 1000));
    if (exp <= now) {
      throw badRequest('invalid_grant', 'The subject token is refused: expired: The token has expired.');
    }
    const accessToken = await this.signer.signToken({
      iss: this.issuer,
      sub: principal.identity.id,
      aud: this.issuer,
      // No client authenticated: the trust stands in for one, as it stands in for a key.
      client_id: principal.id,
      scope: principal.kind,
      trust: subject,
      iat: now,
      exp,
      jti: randomUUID(),
    });
    return {
      access_token: accessToken,
      issued_token_type: ACCESS_TOKEN_TYPE,
      token_type: 'Bearer',
      expires_in: exp - now,
      scope: principal.kind,
    };
  }

  /** The key the client authenticates with, active and with that id; `invalid_client` otherwise. */
  private async client(request: ClientCredentialsRequest): Promise<KeyPrincipal> {
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
