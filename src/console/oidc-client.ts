import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig, type ConsoleOidcConfig } from '../config/config';
import { JWT_ALGORITHMS, JwtRefused, type JwtAlgorithm, type JwtClaims } from '../common/jwt';
import { parseJwks, RemoteJwks, type RemoteKey } from '../common/remote-jwks';
import { verifyIdToken } from './id-token';

/** Why a sign-in with the provider failed, for the log (never a code, a token or a secret). */
export class OidcError extends Error {}

/** What the service uses of the provider's discovery document. */
interface ProviderMetadata {
  authorizationEndpoint: string;
  tokenEndpoint: string;
  jwksUri: string;
  userinfoEndpoint: string | null;
  /** client_secret_basic unless the provider supports only client_secret_post. */
  clientAuth: 'basic' | 'post';
  /** The ID token algorithms both sides accept. */
  algorithms: JwtAlgorithm[];
}

const FETCH_TIMEOUT_MS = 10_000;
const MAX_RESPONSE_BYTES = 512 * 1024;
/** The discovery document is read again after this long (a failed read is retried at the next sign-in). */
const METADATA_TTL_MS = 3600_000;

/**
 * The Console's OpenID Connect relying party (docs/api.md §13, single sign-on): the
 * provider's discovery document and JWKS, both read once and cached in the process
 * (the JWKS read again once when an ID token names a key it does not hold), the
 * authorization URL, the code exchange and the ID token's verification. The provider
 * is the operator's configuration, so its URLs are fetched as they are given.
 */
@Injectable()
export class OidcClient {
  readonly provider: ConsoleOidcConfig | null;
  private metadataCache: { value: Promise<ProviderMetadata>; at: number } | null = null;
  private jwks: { uri: string; jwks: RemoteJwks } | null = null;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    this.provider = config.consoleOidc;
  }

  get redirectUri(): string {
    return `${this.config.publicBaseUrl}/api/v1/console/sso/callback`;
  }

  /** The provider's authorization URL for a sign-in: code flow, PKCE S256, `openid email`. */
  async authorizationUrl(login: { state: string; nonce: string; codeChallenge: string }): Promise<string> {
    const provider = this.required();
    const metadata = await this.metadata();
    const url = new URL(metadata.authorizationEndpoint);
    url.search = new URLSearchParams({
      ...Object.fromEntries(url.searchParams),
      response_type: 'code',
      client_id: provider.clientId,
      redirect_uri: this.redirectUri,
      scope: 'openid email',
      state: login.state,
      nonce: login.nonce,
      code_challenge: login.codeChallenge,
      code_challenge_method: 'S256',
    }).toString();
    return url.toString();
  }

  /**
   * Exchanges the code for tokens, verifies the ID token (signature, iss, aud, exp/iat,
   * nonce) and returns its claims; `email` and `email_verified` come from the UserInfo
   * endpoint when the ID token lacks them (its `sub` must be the token's).
   */
  async signIn(code: string, codeVerifier: string, nonce: string): Promise<JwtClaims> {
    const provider = this.required();
    const metadata = await this.metadata();
    const body = new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: this.redirectUri,
      code_verifier: codeVerifier,
    });
    const headers: Record<string, string> = {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
    };
    if (metadata.clientAuth === 'basic') {
      // RFC 6749 §2.3.1: each part form-encoded before Basic.
      const encode = (value: string) => encodeURIComponent(value).replace(/%20/g, '+');
      headers.authorization = `Basic ${Buffer.from(`${encode(provider.clientId)}:${encode(provider.clientSecret)}`).toString('base64')}`;
    } else {
      body.set('client_id', provider.clientId);
      body.set('client_secret', provider.clientSecret);
    }
    const tokens = await fetchJson(metadata.tokenEndpoint, { method: 'POST', headers, body: body.toString() });
    if (typeof tokens.id_token !== 'string') {
      throw new OidcError('the token response has no id_token');
    }
    const claims = await this.verifyIdToken(tokens.id_token, nonce, metadata);
    if (typeof claims.sub !== 'string' || claims.sub === '') {
      throw new OidcError('the ID token has no sub');
    }
    if (claims.email === undefined && metadata.userinfoEndpoint && typeof tokens.access_token === 'string') {
      const info = await fetchJson(metadata.userinfoEndpoint, {
        headers: { authorization: `Bearer ${tokens.access_token}`, accept: 'application/json' },
      });
      if (info.sub !== claims.sub) {
        throw new OidcError('the UserInfo response is for another subject');
      }
      return { ...claims, email: info.email, email_verified: info.email_verified };
    }
    return claims;
  }

  private async verifyIdToken(token: string, nonce: string, metadata: ProviderMetadata): Promise<JwtClaims> {
    const provider = this.required();
    const expectations = {
      issuer: provider.issuer,
      audience: provider.clientId,
      algorithms: metadata.algorithms,
      nonce,
    };
    const jwks = this.jwksOf(metadata.jwksUri);
    const verify = (keys: readonly RemoteKey[]) =>
      verifyIdToken(
        token,
        keys.map((key) => key.jwk),
        expectations,
      );
    try {
      try {
        return verify(await jwks.keys());
      } catch (error) {
        // A key the cache does not hold: the provider may have rotated; read the JWKS once more.
        if (!(error instanceof JwtRefused) || error.reason !== 'unknown_kid') {
          throw error;
        }
        return verify(await jwks.refetch());
      }
    } catch (error) {
      if (error instanceof JwtRefused) {
        throw new OidcError(`ID token refused (${error.reason}): ${error.message}`);
      }
      throw error;
    }
  }

  /** The provider's JWKS at `uri` (its discovery document's), read once and again for each key id it does not hold. */
  private jwksOf(uri: string): RemoteJwks {
    if (this.jwks?.uri !== uri) {
      const load = async () => {
        const body = await fetchJson(uri, { headers: { accept: 'application/json' } });
        if (!Array.isArray(body.keys)) {
          throw new OidcError('the JWKS has no keys');
        }
        return body;
      };
      const jwks = new RemoteJwks(load, { unknownKidRefetchMs: 0, ttlMs: Infinity }, parseJwks);
      this.jwks = { uri, jwks };
    }
    return this.jwks.jwks;
  }

  private metadata(): Promise<ProviderMetadata> {
    const cached = this.metadataCache;
    if (cached && Date.now() - cached.at < METADATA_TTL_MS) {
      return cached.value;
    }
    const value = this.discover();
    value.catch(() => {
      if (this.metadataCache?.value === value) {
        this.metadataCache = null;
      }
    });
    this.metadataCache = { value, at: Date.now() };
    return value;
  }

  /** Reads `/.well-known/openid-configuration` under the issuer and checks what the flow needs. */
  private async discover(): Promise<ProviderMetadata> {
    const { issuer } = this.required();
    const document = await fetchJson(`${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`, {
      headers: { accept: 'application/json' },
    });
    if (document.issuer !== issuer) {
      throw new OidcError('the discovery document names another issuer');
    }
    const endpoint = (name: string, required: boolean): string | null => {
      const value = document[name];
      if (value === undefined && !required) {
        return null;
      }
      if (typeof value !== 'string' || !/^https?:\/\//.test(value)) {
        throw new OidcError(`the discovery document has no valid ${name}`);
      }
      return value;
    };
    const listed = (name: string): string[] | null =>
      Array.isArray(document[name]) ? (document[name] as unknown[]).filter((v) => typeof v === 'string') : null;
    const methods = listed('code_challenge_methods_supported');
    if (methods && !methods.includes('S256')) {
      throw new OidcError('the provider does not support PKCE with S256');
    }
    const authMethods = listed('token_endpoint_auth_methods_supported') ?? ['client_secret_basic'];
    const algs = listed('id_token_signing_alg_values_supported') ?? ['RS256'];
    const algorithms = JWT_ALGORITHMS.filter((alg) => algs.includes(alg));
    if (algorithms.length === 0) {
      throw new OidcError('the provider signs ID tokens with no algorithm the service accepts');
    }
    return {
      authorizationEndpoint: endpoint('authorization_endpoint', true)!,
      tokenEndpoint: endpoint('token_endpoint', true)!,
      jwksUri: endpoint('jwks_uri', true)!,
      userinfoEndpoint: endpoint('userinfo_endpoint', false),
      clientAuth:
        !authMethods.includes('client_secret_basic') && authMethods.includes('client_secret_post') ? 'post' : 'basic',
      algorithms,
    };
  }

  private required(): ConsoleOidcConfig {
    if (!this.provider) {
      throw new Error('single sign-on is not configured');
    }
    return this.provider;
  }
}

/** GETs (or POSTs) JSON from the provider: bounded in time and size, no redirects followed. */
async function fetchJson(url: string, init: RequestInit): Promise<Record<string, unknown>> {
  let response: Response;
  try {
    response = await fetch(url, { ...init, redirect: 'error', signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
  } catch (error) {
    throw new OidcError(`${new URL(url).origin}${new URL(url).pathname} unreachable: ${(error as Error).message}`);
  }
  const where = `${new URL(url).pathname} answered ${response.status}`;
  const text = await readBounded(response, MAX_RESPONSE_BYTES);
  if (text === null) {
    throw new OidcError(`${where} with a response too large`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new OidcError(`${where}, not JSON`);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw new OidcError(`${where}, not a JSON object`);
  }
  const body = value as Record<string, unknown>;
  if (!response.ok) {
    // The provider's error code only (RFC 6749 §5.2): its description may echo what was sent.
    throw new OidcError(`${where}: ${typeof body.error === 'string' ? body.error.slice(0, 64) : 'error'}`);
  }
  return body;
}

/** The response's body as text, or null past `max` bytes (it stops reading there). */
async function readBounded(response: Response, max: number): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of response.body ?? []) {
      size += chunk.byteLength;
      if (size > max) {
        // Leaving the loop cancels the stream.
        return null;
      }
      chunks.push(Buffer.from(chunk));
    }
  } catch (error) {
    throw new OidcError(`the response could not be read: ${(error as Error).message}`);
  }
  return Buffer.concat(chunks).toString('utf8');
}
