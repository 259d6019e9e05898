import { Body, Controller, Get, Header, Headers, HttpCode, Inject, Post } from '@nestjs/common';
import { ApiConsumes, ApiTags } from '@nestjs/swagger';
import { Public } from '../auth/surface.decorator';
import { Returns } from '../common/api-docs';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { AccessTokenSchema, AuthorizationServerMetadataSchema, type AuthorizationServerMetadata } from './oauth.view';
import { readTokenRequest, TOKEN_EXCHANGE_GRANT } from './token-request';
import { TokenService, type TokenResponse } from './token.service';

/** OAuth 2.0 client credentials for API keys, token exchange for trusted issuers' JWTs, and the authorization server's metadata (docs/api.md §17). */
@ApiTags('OAuth')
@Controller()
export class OAuthController {
  private readonly metadata: AuthorizationServerMetadata;

  constructor(
    private readonly tokens: TokenService,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    const base = config.publicBaseUrl;
    this.metadata = {
      issuer: base,
      token_endpoint: `${base}/oauth/token`,
      jwks_uri: `${base}/.well-known/jwks.json`,
      grant_types_supported: ['client_credentials', TOKEN_EXCHANGE_GRANT],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      response_types_supported: [],
      scopes_supported: ['admin', 'agent'],
      service_documentation: `${base}/docs`,
    };
  }

  // The client authenticates itself in the form or with HTTP Basic, or the subject token is the credential (the guard takes none here).
  @Post('oauth/token')
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  @Header('Pragma', 'no-cache')
  @ApiConsumes('application/x-www-form-urlencoded')
  @Public({
    id: 'requestAccessToken',
    summary: "Exchange an API key or a trusted issuer's JWT for a short-lived access token (OAuth 2.0)",
    notes:
      "`grant_type=client_credentials`: the client is the key: `client_id` = its id, `client_secret` = the key, in the form or as HTTP Basic. `grant_type=urn:ietf:params:oauth:grant-type:token-exchange` (RFC 8693): `subject_token` = a trusted issuer's JWT, `subject_token_type=urn:ietf:params:oauth:token-type:jwt`, no client authentication. Errors take RFC 6749 §5.2 form.",
  })
  @Returns(200, AccessTokenSchema)
  token(
    @Body() form: Record<string, unknown>,
    @Headers('authorization') authorization?: string,
  ): Promise<TokenResponse> {
    return this.tokens.issue(readTokenRequest(form, authorization));
  }

  @Get('.well-known/oauth-authorization-server')
  @Header('Cache-Control', 'public, max-age=3600')
  @Public({
    id: 'getAuthorizationServerMetadata',
    summary: 'Get the OAuth 2.0 authorization server metadata (RFC 8414)',
  })
  @Returns(200, AuthorizationServerMetadataSchema)
  authorizationServer(): AuthorizationServerMetadata {
    return this.metadata;
  }
}
