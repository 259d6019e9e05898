import { Injectable } from '@nestjs/common';
import type { KeyObject } from 'node:crypto';
import { checkClaims, JwtRefused, type DecodedJwt } from '../common/jwt';
import type { AppError } from '../common/app-error';
import type { AgentKeyPrincipal } from '../common/principal';
import { IssuerKeys, type InlineJwks } from './issuer-keys';
import { invalidToken } from './token-errors';
import { TrustedIssuersRepository, type FederatedRecord } from './trusted-issuers.repository';

/**
 * JWTs of trusted issuers — workload identity federation (docs/api.md §17): a token of an
 * issuer an organization trusts, for the trust's audience, whose subject the trust maps
 * to one of the organization's identities, acts as that identity's agent scope. The
 * trust and the identity are read on every request (one statement: a removed trust or a
 * disabled identity counts at once); the issuer's keys come from memory (IssuerKeys), and a
 * signature already checked with the same key is not checked again (TokenVerifier).
 */
/** Checks a token's signature with an issuer's key (TokenVerifier's: a signature it checked before costs nothing). */
export type SignatureCheck = (key: KeyObject, alg?: string) => void;

@Injectable()
export class FederatedTokens {
  constructor(
    private readonly repository: TrustedIssuersRepository,
    private readonly keys: IssuerKeys,
  ) {}

  async verify(token: DecodedJwt, signedWith: SignatureCheck): Promise<AgentKeyPrincipal> {
    return (await this.verifySubject(token, signedWith)).principal;
  }

  /**
   * `verify`, and what a token exchanged for this one records of it (a subject token of
   * RFC 8693, TokenService.exchange): its trust, that trust's audience and subject claim.
   */
  async verifySubject(
    token: DecodedJwt,
    signedWith: SignatureCheck,
  ): Promise<{ principal: AgentKeyPrincipal; subject: ExchangedSubject }> {
    const { claims, header } = token;
    const checkedAt = performance.now();
    const audiences = (Array.isArray(claims.aud) ? claims.aud : [claims.aud]).filter(
      (aud): aud is string => typeof aud === 'string',
    );
    if (typeof claims.iss !== 'string' || audiences.length === 0) {
      throw new JwtRefused('wrong_issuer', 'The token was not issued by this service or a trusted issuer.');
    }
    const [trust, another] = await this.repository.federated(claims.iss, audiences, claims);
    if (!trust) {
      throw new JwtRefused(
        'wrong_issuer',
        'The token was not issued by this service or a trusted issuer for its audience.',
      );
    }
    if (another) {
      throw new JwtRefused('wrong_audience', 'The token names the audiences of more than one trust; name one.');
    }
    if (header.kid === undefined) {
      throw new JwtRefused('unknown_kid', 'The token names no key id (`kid`).');
    }
    const key = await this.keys.key(claims.iss, trust.jwksUri, header.kid, inlineOf(trust));
    signedWith(key.key, key.alg);
    checkClaims(token, { issuer: claims.iss, audience: trust.audience });
    const subject = claims[trust.subjectClaim];
    if (typeof subject !== 'string') {
      throw new JwtRefused('malformed', `The token has no string \`${trust.subjectClaim}\` claim.`);
    }
    return {
      principal: principalOf(trust, checkedAt, claims.exp as number),
      subject: {
        id: trust.trustId,
        iss: claims.iss,
        aud: trust.audience,
        claim: trust.subjectClaim,
        sub: subject,
        kid: header.kid,
      },
    };
  }

  /**
   * The principal of a service token exchanged for a trusted issuer's JWT (docs/api.md
   * §17), read as that JWT would be read now — the same lookup, by the issuer, audience
   * and subject it recorded: the trust removed, its audience or subject claim changed,
   * the subject remapped or the identity gone ends the token on its next request — and so
   * does the key that signed that JWT leaving the trust's keys (its inline `jwks`, or its
   * JWKS as IssuerKeys holds it, under the same fetch rules): `unknown_kid`, as the JWT gets.
   */
  async exchanged(subject: ExchangedSubject, identityId: string, exp: number): Promise<AgentKeyPrincipal> {
    const checkedAt = performance.now();
    const [trust] = await this.repository.federated(subject.iss, [subject.aud], { [subject.claim]: subject.sub });
    if (!trust || trust.trustId !== subject.id) {
      throw invalidToken(
        'untrusted_issuer',
        'The trust this token was exchanged under was removed, or its issuer or audience changed.',
      );
    }
    await this.keys.key(subject.iss, trust.jwksUri, subject.kid, inlineOf(trust));
    if (trust.subjectClaim !== subject.claim || trust.identityId !== identityId) {
      throw unmapped();
    }
    return principalOf(trust, checkedAt, exp);
  }
}

/** The trust and subject a token exchanged for a trusted issuer's JWT records (its `trust` claim). */
export interface ExchangedSubject {
  /** The trust's id. */
  id: string;
  /** The subject token's issuer, and the trust's audience it was issued for. */
  iss: string;
  aud: string;
  /** The trust's subject claim, and its value in the subject token. */
  claim: string;
  sub: string;
  /** The key id that signed the subject token: it must stay among the trust's keys. */
  kid: string;
}

function inlineOf(trust: FederatedRecord): InlineJwks | null {
  return trust.jwks === null ? null : { trustId: trust.trustId, jwks: trust.jwks };
}

function unmapped(): AppError {
  return invalidToken(
    'unmapped_subject',
    "The token's subject is not mapped to an identity of the trusting organization (or that identity is gone).",
  );
}

/** The agent a trust's token acts as: its subject's identity, as the trust's lookup read it. */
function principalOf(trust: FederatedRecord, checkedAt: number, exp: number): AgentKeyPrincipal {
  if (!trust.identityId) {
    throw unmapped();
  }
  return {
    kind: 'agent',
    // The trust stands in for a key: quotas and open-call slots count per trust, and a removed trust ends its calls.
    id: trust.trustId,
    label: `federated:${trust.trustId}`,
    organizationId: trust.organizationId,
    identity: {
      id: trust.identityId,
      handle: trust.identityHandle!,
      claimed: trust.identityClaimed === true,
      enabled: trust.identityEnabled === true,
    },
    checkedAt,
    admissionVersion: trust.admissionVersion,
    expiresAt: new Date(exp * 1000),
    federated: true,
  };
}
