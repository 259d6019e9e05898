import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import type { TokenResponse } from './token.service';

// --- OpenAPI schemas of the token endpoint and the authorization server's metadata (docs/api.md §17) ---

@ApiSchema({ name: 'AccessToken' })
export class AccessTokenSchema implements TokenResponse {
  @ApiProperty({ description: 'A JWT (RFC 9068), sent as `Authorization: Bearer <access_token>`.' })
  access_token: string;
  @ApiProperty({ enum: ['Bearer'] }) token_type: 'Bearer';
  @ApiProperty({
    description:
      'Seconds until it expires (OAUTH_TOKEN_TTL_SECONDS, or less: the key, or the exchanged subject token, expires first).',
  })
  expires_in: number;
  @ApiProperty({
    enum: ['admin', 'agent'],
    description: "The key's scope, which the token has (`agent` for an exchanged token).",
  })
  scope: 'admin' | 'agent';
  @ApiProperty({
    required: false,
    enum: ['urn:ietf:params:oauth:token-type:access_token'],
    description: 'A token exchange only (RFC 8693 §2.2.1): the kind of token issued.',
  })
  issued_token_type?: 'urn:ietf:params:oauth:token-type:access_token';
}

@ApiSchema({ name: 'OAuthError' })
export class OAuthErrorSchema {
  @ApiProperty({
    enum: [
      'invalid_request',
      'invalid_client',
      'invalid_grant',
      'invalid_target',
      'unsupported_grant_type',
      'invalid_scope',
      'server_error',
    ],
  })
  error: string;
  @ApiProperty() error_description: string;
}

/** RFC 8414 authorization server metadata. */
export interface AuthorizationServerMetadata {
  issuer: string;
  token_endpoint: string;
  jwks_uri: string;
  grant_types_supported: string[];
  token_endpoint_auth_methods_supported: string[];
  response_types_supported: string[];
  scopes_supported: string[];
  service_documentation: string;
}

@ApiSchema({ name: 'AuthorizationServerMetadata' })
export class AuthorizationServerMetadataSchema implements AuthorizationServerMetadata {
  @ApiProperty({ description: "The tokens' `iss` and `aud`: the service's public base URL." }) issuer: string;
  @ApiProperty() token_endpoint: string;
  @ApiProperty({ description: 'The keys that verify access tokens (and Agent Card signatures).' }) jwks_uri: string;
  @ApiProperty({ type: [String] }) grant_types_supported: string[];
  @ApiProperty({ type: [String] }) token_endpoint_auth_methods_supported: string[];
  @ApiProperty({ type: [String], description: 'None: the service has no authorization endpoint.' })
  response_types_supported: string[];
  @ApiProperty({ type: [String] }) scopes_supported: string[];
  @ApiProperty() service_documentation: string;
}
