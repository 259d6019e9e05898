import { Inject, Injectable } from '@nestjs/common';
import { AccessTokenVerifier } from '../auth/credential-verifiers';
import type { KeyObject } from 'node:crypto';
import { checkClaims, decodeJwt, JwtRefused, MAX_JWT_LENGTH, verifySignature, type DecodedJwt } from '../common/jwt';
import type { AppError } from '../common/app-error';
import type { AgentKeyPrincipal, KeyPrincipal } from '../common/principal';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { CardSigner } from '../directory/card-signer';
import { KeysService } from '../keys/keys.service';
import { FederatedTokens, type ExchangedSubject, type SignatureCheck } from './federated-tokens';
import { invalidToken } from './token-errors';
import { TrustedIssuersRepository } from './trusted-issuers.repository';

/** Tokens whose signature this instance has checked, kept so a token's next request costs no signature check. */
const VERIFIED_TOKENS = 10_000;

/**
 * `Authorization: Bearer <JWT>` (docs/api.md §17). The service's own access tokens
 * are verified from memory (the signing keys CardSigner holds) — no network call — and
 * then their key is read as an API key is read on every request (KeysService.verifyId:
 * the same batched, uncached lookup and the same standing), so the token acts with
 * exactly its key's scope and identity, and a revoked or expired key ends its tokens on
 * the next request. A JWT of another issuer is a trusted issuer's (FederatedTokens).
 * Either way a signature checked once is remembered by the token, with the key that
 * checked it: its next request costs neither a parse nor a signature check while that
 * key is still the one its issuer's key id names; the claims are checked on every use.
 */
@Injectable()
export class TokenVerifier extends AccessTokenVerifier {
  private readonly issuer: string;
  /** Token → itself decoded and the key its signature was checked with. */
  private readonly verified = new Map<string, { decoded: DecodedJwt; key: KeyObject }>();

  constructor(
    private readonly keys: KeysService,
    private readonly signer: CardSigner,
    private readonly federated: FederatedTokens,
    private readonly trusts: TrustedIssuersRepository,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    super();
    this.issuer = config.publicBaseUrl;
  }

  async verifyToken(token: string, arriving = false): Promise<KeyPrincipal> {
    try {
      const decoded = this.verified.get(token)?.decoded ?? decodeJwt(token);
      if (decoded.claims.iss !== this.issuer) {
        const signedWith: SignatureCheck = (key, alg) => this.checkSignature(token, decoded, key, alg);
        return await this.federated.verify(decoded, signedWith);
      }
      const kid = decoded.header.kid;
      const key = kid === undefined ? null : await this.signer.verificationKey(kid);
      if (!key) {
        throw new JwtRefused('unknown_kid', "The token's key id is not one of the service's published keys.");
      }
      this.checkSignature(token, decoded, key.key, key.alg);
      return await this.ownToken(decoded, arriving);
    } catch (error) {
      throw error instanceof JwtRefused ? invalidToken(error.reason, error.message) : error;
    }
  }

  /**
   * A trusted issuer's JWT offered for exchange (RFC 8693's subject token, TokenService):
   * verified exactly as it is as a bearer token, with the same refusals (a 401
   * `invalid_token` naming the reason); the service's own tokens are not exchanged.
   */
  async verifySubjectToken(token: string): Promise<{ principal: AgentKeyPrincipal; subject: ExchangedSubject }> {
    try {
      const decoded = this.verified.get(token)?.decoded ?? decodeJwt(token);
      if (decoded.claims.iss === this.issuer) {
        throw new JwtRefused(
          'wrong_issuer',
          "The subject token must be a trusted issuer's JWT, not the service's own.",
        );
      }
      return await this.federated.verifySubject(decoded, (key, alg) => this.checkSignature(token, decoded, key, alg));
    } catch (error) {
      throw error instanceof JwtRefused ? invalidToken(error.reason, error.message) : error;
    }
  }

  async lostStanding(principal: AgentKeyPrincipal): Promise<AppError | null> {
    if (principal.expiresAt && principal.expiresAt.getTime() <= Date.now()) {
      return invalidToken('expired', 'The token expired while this call was open.');
    }
    return (await this.trusts.exists(principal.id))
      ? null
      : invalidToken('untrusted_issuer', "The token's trusted issuer was removed while this call was open.");
  }

  /** Checks the token's signature with `key`, unless that very key checked it before. */
  private checkSignature(token: string, decoded: DecodedJwt, key: KeyObject, alg?: string): void {
    if (this.verified.get(token)?.key === key) {
      return;
    }
    verifySignature(decoded, key, alg);
    // decodeJwt refuses longer tokens; the cache's bound must not rest on that alone.
    if (token.length > MAX_JWT_LENGTH) {
      return;
    }
    if (this.verified.size >= VERIFIED_TOKENS) {
      this.verified.delete(this.verified.keys().next().value!);
    }
    this.verified.set(token, { decoded, key });
  }

  /** The claims of a token signed by the service, and its key as it stands now. */
  private async ownToken(token: DecodedJwt, arriving: boolean): Promise<KeyPrincipal> {
    checkClaims(token, { issuer: this.issuer, audience: this.issuer, types: ['at+jwt'] });
    if (token.claims.trust !== undefined) {
      return this.exchangedToken(token);
    }
    const keyId = token.claims.client_id;
    if (typeof keyId !== 'string') {
      throw new JwtRefused('malformed', 'The token names no client_id.');
    }
    const principal = await this.keys.verifyId(keyId, arriving);
    if (!principal) {
      throw invalidToken('key_revoked', 'The API key this token stands for is revoked.');
    }
    return principal;
  }

  /** A token exchanged for a trusted issuer's JWT (TokenService.exchange): its trust read again as that JWT's would be. */
  private async exchangedToken(token: DecodedJwt): Promise<AgentKeyPrincipal> {
    const { trust, sub, exp } = token.claims;
    const subject = trust as Partial<Record<keyof ExchangedSubject, unknown>> | null;
    const fields: Array<keyof ExchangedSubject> = ['id', 'iss', 'aud', 'claim', 'sub', 'kid'];
    if (
      typeof subject !== 'object' ||
      subject === null ||
      !fields.every((field) => typeof subject[field] === 'string') ||
      typeof sub !== 'string' ||
      typeof exp !== 'number'
    ) {
      throw new JwtRefused('malformed', 'The token names no trust and identity it was exchanged for.');
    }
    return this.federated.exchanged(subject as ExchangedSubject, sub, exp);
  }
}
