import { Inject, Injectable } from '@nestjs/common';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import * as bcrypt from 'bcrypt';
import type { Logger } from 'pino';
import { AuditService } from '../audit/audit.service';
import { forbidden, notFound, unauthorized } from '../common/app-error';
import { LOGGER } from '../common/tokens';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { Database } from '../database/database';
import { ConsoleRepository } from './console.repository';
import { ConsoleService, signInEntry } from './console.service';
import type { SessionView } from './console.view';
import { emailDomain } from './email-domains';
import { OidcClient, OidcError } from './oidc-client';
import type { SsoConfigView } from './sso.view';
import { SsoRepository } from './sso.repository';
import { TeamsService } from './teams.service';

/** How long a sign-in may stay at the provider before its callback is refused. */
export const SSO_LOGIN_TTL_MS = 10 * 60_000;
const RANDOM = /^[A-Za-z0-9_-]{43}$/;
const FAILED = 'The sign-in with your single sign-on provider did not succeed; please try again.';

const random = () => randomBytes(32).toString('base64url');
const sha256 = (value: string) => createHash('sha256').update(value).digest();

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** A Console page to land on after signing in (a path under /console, same origin), or null: the Console's home. */
export function consolePath(next: unknown): string | null {
  if (typeof next !== 'string' || next.length > 500) {
    return null;
  }
  return /^\/console(\/|\?|$)/.test(next) && /^[\x21-\x7e]*$/.test(next) && !/\\|\/\//.test(next) ? next : null;
}

/**
 * Single sign-on to the Console (docs/api.md §13): the authorization code flow with
 * PKCE against the configured OpenID Connect provider. A person is matched by the
 * verified email the provider vouches for: a Console user with it signs in; someone
 * new joins through an open invitation to that address, or through an organization's
 * email domain; anyone else is refused. Every outcome on an account is audited.
 */
@Injectable()
export class SsoService {
  constructor(
    private readonly db: Database,
    private readonly repository: ConsoleRepository,
    private readonly sso: SsoRepository,
    private readonly oidc: OidcClient,
    private readonly console: ConsoleService,
    private readonly teams: TeamsService,
    private readonly audit: AuditService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  get enabled(): boolean {
    return this.oidc.provider !== null;
  }

  settings(): SsoConfigView {
    const provider = this.oidc.provider;
    return provider
      ? { enabled: true, provider_name: provider.providerName, start_url: '/api/v1/console/sso' }
      : { enabled: false, provider_name: null, start_url: null };
  }

  /**
   * Starts a sign-in: the state, nonce and PKCE verifier are kept under the hash of
   * `browser`, a random value the controller sets as an HttpOnly cookie, and the
   * browser goes to the provider's authorization URL.
   */
  async start(next: unknown): Promise<{ location: string; browser: string }> {
    this.requireConfigured();
    const browser = random();
    const login = { state: random(), nonce: random(), codeVerifier: random() };
    let location: string;
    try {
      location = await this.oidc.authorizationUrl({
        state: login.state,
        nonce: login.nonce,
        codeChallenge: sha256(login.codeVerifier).toString('base64url'),
      });
    } catch (error) {
      throw this.failed(error);
    }
    await this.sso.insertLogin({
      ...login,
      browserHash: sha256(browser),
      nextPath: consolePath(next),
      expiresAt: new Date(Date.now() + SSO_LOGIN_TTL_MS),
    });
    return { location, browser };
  }

  /**
   * The provider's callback: the sign-in bound to this browser (used once) must be the
   * one `state` names; the code is exchanged with its PKCE verifier and the ID token
   * verified with its nonce; then the verified email decides who signs in.
   */
  async callback(
    browser: string | undefined,
    params: Record<string, unknown>,
  ): Promise<{ session: SessionView; next: string }> {
    const provider = this.requireConfigured();
    const login = browser && RANDOM.test(browser) ? await this.sso.takeLogin(sha256(browser)) : null;
    if (!login || typeof params.state !== 'string' || !sameText(params.state, login.state)) {
      throw unauthorized('sso_state_invalid', 'This sign-in was not started here, was already used or took too long.');
    }
    if (typeof params.error === 'string') {
      throw this.failed(new OidcError(`the provider answered ${params.error.slice(0, 64)}`));
    }
    // RFC 9207: a provider that names itself must be the one the sign-in went to.
    if (params.iss !== undefined && params.iss !== provider.issuer) {
      throw this.failed(new OidcError('the callback names another issuer'));
    }
    if (typeof params.code !== 'string' || params.code === '' || params.code.length > 2048) {
      throw this.failed(new OidcError('the callback has no code'));
    }
    let claims: Record<string, unknown>;
    try {
      claims = await this.oidc.signIn(params.code, login.codeVerifier, login.nonce);
    } catch (error) {
      throw this.failed(error);
    }
    const email = typeof claims.email === 'string' && emailDomain(claims.email) ? claims.email : null;
    if (!email || claims.email_verified !== true) {
      await this.refuseUnverified(email);
    }
    return { session: await this.signInAs(email!), next: login.nextPath ?? '/console/' };
  }

  /** The person behind a verified email: their account, an invitation to it, or their domain's organization. */
  private async signInAs(email: string): Promise<SessionView> {
    const user = await this.repository.userWithPassword({ email });
    if (user) {
      const session = await this.db.transaction(async (tx) => {
        const organization = (await this.repository.organization(user.organizationId, tx))!;
        // Opened only if the password did not change meanwhile (a change ends every session).
        const opened = await this.console.openSession(user, user.passwordHash, organization, tx);
        if (opened) {
          await this.audit.record(tx, signInEntry(user, 'console.sso_signed_in'));
        }
        return opened;
      });
      if (!session) {
        throw unauthorized('sso_sign_in_failed', FAILED);
      }
      return session;
    }
    // A password nobody knows: the new member signs in with the provider (docs/api.md §13).
    const passwordHash = await bcrypt.hash(random(), this.config.bcryptCost);
    return this.console.withUniqueEmail(() =>
      this.db.transaction(async (tx) => {
        const invite = await this.repository.lockOpenInviteForEmail(email, tx);
        const organizationId = invite ? null : await this.sso.organizationForDomain(emailDomain(email)!, tx);
        if (!invite && !organizationId) {
          throw forbidden(
            'sso_no_account',
            'There is no Console account for your email. Ask an administrator of your organization for an invitation.',
          );
        }
        const session = invite
          ? await this.teams.joinByInvite(invite, passwordHash, tx, { password: false })
          : await this.teams.joinByDomain(organizationId!, email, passwordHash, tx);
        await this.audit.record(
          tx,
          signInEntry(
            { id: session.user.id, organizationId: session.organization.id, email: session.user.email },
            'console.sso_signed_in',
          ),
        );
        return session;
      }),
    );
  }

  /** An email the provider does not vouch for signs nobody in; the account it names sees the attempt. */
  private async refuseUnverified(email: string | null): Promise<never> {
    const user = email ? await this.repository.userWithPassword({ email }) : null;
    if (user) {
      await this.audit.record(undefined, signInEntry(user, 'console.sso_sign_in_failed'));
    }
    throw forbidden('sso_email_unverified', 'Your single sign-on provider has not verified your email address.');
  }

  /** A failure of the provider or of its answer: logged (never a code or a token), refused as one. */
  private failed(error: unknown) {
    if (!(error instanceof OidcError)) {
      throw error;
    }
    this.logger.warn({ reason: error.message }, 'console single sign-on failed');
    return unauthorized('sso_sign_in_failed', FAILED);
  }

  private requireConfigured() {
    const provider = this.oidc.provider;
    if (!provider) {
      throw notFound('sso_not_configured', 'Single sign-on is not configured on this service.');
    }
    return provider;
  }
}
