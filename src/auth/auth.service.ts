import { Inject, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { forbidden, unauthorized } from '../common/app-error';
import type { KeyPrincipal, Principal } from '../common/principal';
import { readCookie, SESSION_COOKIE } from '../common/session-cookie';
import { detachedFromRequest } from '../common/request-context';
import { looksLikeJwt } from '../common/jwt';
import { AccessTokenVerifier, ApiKeyVerifier, SessionVerifier } from './credential-verifiers';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * How long after its request arrived a key's early read (AuthService.begin) still
 * answers for the request; a body slower than this has the key read again when its
 * guard runs. Bodies on a working connection take far less.
 */
const EARLY_READ_FRESH_MS = 50;

/** What a credential is read from: an HTTP request, or a gRPC call's metadata as headers. */
export type CredentialSource = Pick<Request, 'headers' | 'method'>;

/** The bearer credential of `Authorization: Bearer <token>`, or null. */
function bearerOf(req: CredentialSource): string | null {
  const authorization = req.headers.authorization;
  if (authorization === undefined) {
    return null;
  }
  const match = /^Bearer\s+(\S+)$/i.exec(authorization);
  return match ? match[1] : '';
}

/**
 * Decides who is calling. `X-API-Key`, when present, is the credential (an invalid
 * one is a 401, with no fallback to a session); otherwise `Authorization: Bearer`
 * with an access token (a JWT: docs/api.md §17) or a Console session token; otherwise
 * the session cookie.
 */
@Injectable()
export class AuthService {
  private readonly allowedOrigin: string;

  constructor(
    private readonly keys: ApiKeyVerifier,
    private readonly sessions: SessionVerifier,
    private readonly tokens: AccessTokenVerifier,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.allowedOrigin = new URL(config.publicBaseUrl).origin;
  }

  /** API key reads begun as their requests arrived (begin), by request, with when they began. */
  private readonly begun = new WeakMap<CredentialSource, { read: Promise<KeyPrincipal | null>; at: number }>();

  /**
   * Begins reading the API key of a request that has a body as soon as its headers are
   * in — a middleware ahead of the body parser (earlyKeyCheck) — so that the key's round
   * trip overlaps the body's arrival and parsing, and authenticate() finds it under way.
   * The key is still read after the request arrived (KeyLookup), and authenticate() reads
   * it again should its body have taken longer than EARLY_READ_FRESH_MS: revocation
   * stays immediate, a slow upload begun before one included. A request refused before
   * its guard (an unknown route, a body refused) has had its key read, not used.
   * The read runs detached from the request object (its log context and span stay):
   * its promise, held for the guard, made in a context holding the request kept each
   * request's objects alive through young-generation collections until a full one —
   * measured under load, 7 MB promoted every ~100 ms and 9 ms pauses, against 1.7 MB and
   * 3.6 ms (BENCHMARKS.md, "Requests kept for a full collection").
   */
  begin(req: CredentialSource): void {
    const apiKey = req.headers['x-api-key'];
    const token = apiKey === undefined ? bearerOf(req) : null;
    let read: Promise<KeyPrincipal | null>;
    if (typeof apiKey === 'string') {
      read = detachedFromRequest(() => this.keys.verify(apiKey, true));
    } else if (token && looksLikeJwt(token)) {
      // An access token's key is read the same way (AccessTokenVerifier re-reads it by id).
      read = detachedFromRequest(() => this.tokens.verifyToken(token, true));
    } else {
      return;
    }
    read.catch(() => undefined); // authenticate() reports a failure; a request refused before it never asks
    this.begun.set(req, { read, at: performance.now() });
  }

  /** The key's read begun on arrival, if it began recently enough to stand for this moment. */
  private begunRead(req: CredentialSource): Promise<KeyPrincipal | null> | undefined {
    const begun = this.begun.get(req);
    return begun && performance.now() - begun.at <= EARLY_READ_FRESH_MS ? begun.read : undefined;
  }

  /** The principal, null when no credential was sent; throws 401 for a bad one. */
  async authenticate(req: CredentialSource): Promise<Principal | null> {
    const apiKey = req.headers['x-api-key'];
    if (apiKey !== undefined) {
      const principal = typeof apiKey === 'string' ? await (this.begunRead(req) ?? this.keys.verify(apiKey)) : null;
      if (!principal) {
        throw unauthorized('invalid_api_key', 'The API key is invalid or has been revoked.');
      }
      this.keys.used(principal);
      return principal;
    }
    const bearer = bearerOf(req);
    if (bearer !== null) {
      if (looksLikeJwt(bearer)) {
        const principal = (await this.begunRead(req)) ?? (await this.tokens.verifyToken(bearer));
        if (principal.kind === 'admin' || !principal.federated) {
          this.keys.used(principal);
        }
        return principal;
      }
      const principal = bearer ? await this.sessions.verifySession(bearer, false) : null;
      if (!principal) {
        throw unauthorized('invalid_session', 'The session token is invalid or has expired.');
      }
      return principal;
    }
    const cookie = readCookie(req.headers.cookie, SESSION_COOKIE);
    if (cookie !== undefined) {
      const principal = await this.sessions.verifySession(cookie, true);
      if (!principal) {
        throw unauthorized('invalid_session', 'The session is invalid or has expired.');
      }
      if (!SAFE_METHODS.has(req.method)) {
        this.checkOrigin(req);
      }
      return principal;
    }
    return null;
  }

  /** CSRF defence for cookie sessions, on top of SameSite=Strict. */
  private checkOrigin(req: CredentialSource): void {
    const origin = req.headers.origin ?? originOf(req.headers.referer);
    if (origin !== this.allowedOrigin) {
      throw forbidden(
        'csrf_failed',
        'Cookie-authenticated requests that change state must come from the Console origin.',
      );
    }
  }
}

function originOf(referer: string | undefined): string | undefined {
  if (!referer) {
    return undefined;
  }
  try {
    return new URL(referer).origin;
  } catch {
    return undefined;
  }
}
