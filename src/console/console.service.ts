import { Inject, Injectable } from '@nestjs/common';
import { createHash, randomBytes } from 'node:crypto';
import * as bcrypt from 'bcrypt';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { badRequest, conflict, forbidden, unauthorized } from '../common/app-error';
import { AuditService } from '../audit/audit.service';
import { RateLimitService } from '../limits/rate-limit.service';
import { Database, type Tx } from '../database/database';
import type { ConsolePrincipal } from '../common/principal';
import { ConsoleRepository, type ConsoleUserRecord } from './console.repository';
import { emailKey } from '../common/email-key';
import type { Organization } from './organization.entity';
import { toOrganizationView, toUserView, type MeView, type SessionView } from './console.view';

const TOKEN_PREFIX = 'a2a_ses_';
const TOKEN_PATTERN = /^a2a_ses_[A-Za-z0-9_-]{43}$/;
const INVALID_LOGIN = 'The email or password is incorrect.';
const EMAIL_TAKEN = 'A Console user with that email already exists.';
export const PASSWORD_SIGN_IN_DISABLED =
  'Your organization has turned password sign-in off: sign in with your single sign-on provider.';

const hashToken = (token: string) => createHash('sha256').update(token).digest();

/** A sign-in (or failed attempt) as the audit log records it: by and on the user's account. */
export function signInEntry(user: { id: string; organizationId: string; email: string }, action: string) {
  return {
    organizationId: user.organizationId,
    actor: { kind: 'console' as const, id: user.id },
    action,
    target: { type: 'console_user', id: user.id, label: user.email },
  };
}

@Injectable()
export class ConsoleService {
  /** Compared against when the email is unknown, so timing does not reveal accounts. */
  private readonly dummyHash: Promise<string>;

  constructor(
    private readonly db: Database,
    private readonly repository: ConsoleRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly limits: RateLimitService,
    private readonly audit: AuditService,
  ) {
    this.dummyHash = bcrypt.hash(randomBytes(16).toString('hex'), config.bcryptCost);
  }

  async signup(input: { organization_name: string; email: string; password: string }): Promise<SessionView> {
    if (this.config.consoleSignup === 'closed') {
      throw forbidden('signup_closed', 'Console signup is closed on this service.');
    }
    const passwordHash = await bcrypt.hash(input.password, this.config.bcryptCost);
    return this.withUniqueEmail(() =>
      this.db.transaction(async (tx) => {
        const { user, organization } = await this.insertOrganizationWithUser(
          input.organization_name,
          input.email,
          passwordHash,
          tx,
        );
        // The password was set in this transaction: nothing can have changed it.
        return (await this.openSession(user, passwordHash, organization, tx))!;
      }),
    );
  }

  /** Creates an organization and its first Console user (the bootstrap CLI; signup also opens a session). */
  async createOrganizationWithUser(
    organizationName: string,
    email: string,
    password: string,
    tx?: Tx,
  ): Promise<{ user: ConsoleUserRecord; organization: Organization }> {
    const passwordHash = await bcrypt.hash(password, this.config.bcryptCost);
    const work = (tx: Tx) => this.insertOrganizationWithUser(organizationName, email, passwordHash, tx);
    return this.withUniqueEmail(() => (tx ? work(tx) : this.db.transaction(work)));
  }

  private async insertOrganizationWithUser(organizationName: string, email: string, passwordHash: string, tx: Tx) {
    await this.refuseTakenEmail(email, tx);
    const organization = await this.repository.insertOrganization(organizationName, tx);
    const user = await this.repository.insertUser({ organizationId: organization.id, email, passwordHash }, tx);
    return { user, organization };
  }

  /** Refuses (email_taken) an email that a Console user already has, however it is spelled. */
  async refuseTakenEmail(email: string, tx: Tx): Promise<void> {
    if (await this.repository.emailTaken(email, tx)) {
      throw conflict('email_taken', EMAIL_TAKEN);
    }
  }

  /**
   * Runs `work`, which creates a Console user (signup, the bootstrap CLI, accepting an
   * invitation): two of them racing for one email are decided by the unique index, email_taken.
   */
  async withUniqueEmail<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if ((error as { driverError?: { code?: string } }).driverError?.code === '23505') {
        throw conflict('email_taken', EMAIL_TAKEN);
      }
      throw error;
    }
  }

  async login(input: { email: string; password: string }, clientAddress: string): Promise<SessionView> {
    // Failures are counted per (email, client address), in the shared store; the email
    // as the account lookup compares it, so every spelling of one address is one bucket.
    // The attempt is counted before bcrypt runs (atomically: racing attempts cannot
    // all pass), and a success gives it back.
    const throttleKey = `${emailKey(input.email)}|${clientAddress}`;
    await this.limits.reserve('login', throttleKey);

    const user = await this.repository.userWithPassword({ email: input.email });
    const ok = await bcrypt.compare(input.password, user?.passwordHash ?? (await this.dummyHash));
    // The session opens only if the password is still the one just verified: a change
    // that committed meanwhile makes this attempt a failure like any wrong password.
    const session =
      user && ok
        ? await this.db.transaction(async (tx) => {
            const organization = await this.organizationOf(user, tx);
            if (!organization.passwordSignIn) {
              return 'password_sign_in_disabled' as const;
            }
            const opened = await this.openSession(user, user.passwordHash, organization, tx);
            if (opened) {
              await this.audit.record(tx, signInEntry(user, 'console.signed_in'));
            }
            return opened;
          })
        : null;
    if (session === 'password_sign_in_disabled') {
      // Only someone who knows the password learns this (a wrong one is invalid_credentials).
      await this.audit.record(undefined, signInEntry(user!, 'console.sign_in_failed'));
      throw forbidden('password_sign_in_disabled', PASSWORD_SIGN_IN_DISABLED);
    }
    if (!session) {
      // A failed sign-in changes nothing, so it has no transaction: its entry is written on its own.
      // It is the attempted account's organization that sees it (an unknown email has none).
      if (user) {
        await this.audit.record(undefined, signInEntry(user, 'console.sign_in_failed'));
      }
      throw unauthorized('invalid_credentials', INVALID_LOGIN);
    }
    await this.limits.clear('login', throttleKey);
    return session;
  }

  async logout(principal: ConsolePrincipal): Promise<void> {
    await this.repository.revokeSession(principal.sessionId);
  }

  /**
   * Changes the caller's password after checking the current one; every other
   * session of the caller ends (this one stays). Wrong current passwords count
   * against the login throttle, so a stolen session cannot guess it.
   */
  async changePassword(
    principal: ConsolePrincipal,
    input: { current_password: string; new_password: string },
  ): Promise<void> {
    const throttleKey = `password|${principal.id}`;
    await this.limits.reserve('login', throttleKey);
    const user = await this.repository.userWithPassword({ id: principal.id });
    if (!user) {
      throw new Error(`Console user ${principal.id} not found`);
    }
    if (!(await bcrypt.compare(input.current_password, user.passwordHash))) {
      throw badRequest('wrong_password', 'The current password is incorrect.', [
        { field: 'current_password', message: 'current_password is incorrect' },
      ]);
    }
    await this.limits.clear('login', throttleKey);
    const passwordHash = await bcrypt.hash(input.new_password, this.config.bcryptCost);
    await this.db.transaction(async (tx) => {
      await this.repository.setPassword(principal.id, passwordHash, tx);
      await this.repository.revokeOtherSessions(principal.id, principal.sessionId, tx);
      // Which field changed, never its value.
      await this.audit.record(tx, {
        organizationId: principal.organizationId,
        action: 'console_user.password_changed',
        target: { type: 'console_user', id: principal.id },
      });
    });
  }

  async me(principal: ConsolePrincipal): Promise<MeView> {
    const user = await this.repository.user(principal.id);
    if (!user) {
      throw new Error(`Console user ${principal.id} not found`);
    }
    const organization = await this.organizationOf(user);
    return { user: toUserView(user), organization: toOrganizationView(organization) };
  }

  /** A Console user's email (an approval names the person who decided it), or null. */
  async email(userId: string): Promise<string | null> {
    return (await this.repository.user(userId))?.email ?? null;
  }

  /** Organization names by id, in one query (Agent Cards name their provider). */
  async organizationNames(ids: readonly string[]): Promise<Map<string, string>> {
    if (ids.length === 0) {
      return new Map();
    }
    return this.repository.organizationNames([...new Set(ids)]);
  }

  /** The ids of the organizations called `name`, case-insensitively (docs/api.md §4: the `organization` filter). */
  organizationIdsNamed(name: string): Promise<string[]> {
    return this.repository.organizationIdsNamed(name);
  }

  /** The Console principal behind a session token, or null if unknown, expired or logged out. */
  async verifySession(token: string, viaCookie: boolean): Promise<ConsolePrincipal | null> {
    if (!TOKEN_PATTERN.test(token)) {
      return null;
    }
    const session = await this.repository.activeSession(hashToken(token));
    if (!session) {
      return null;
    }
    return {
      kind: 'console',
      id: session.userId,
      sessionId: session.sessionId,
      organizationId: session.organizationId,
      viaCookie,
    };
  }

  /** Whether a session that authenticated earlier still holds (event streams ask each time they wake). */
  async isSessionActive(sessionId: string): Promise<boolean> {
    return this.repository.isSessionActive(sessionId);
  }

  /**
   * A new session for a user (signup, login, accepting an invitation), stamping the
   * user's last sign-in; null when the user's password is no longer `passwordHash`,
   * the one the caller verified or set (it changed meanwhile).
   */
  async openSession(
    user: ConsoleUserRecord,
    passwordHash: string,
    organization: Organization,
    tx?: Tx,
  ): Promise<SessionView | null> {
    const token = TOKEN_PREFIX + randomBytes(32).toString('base64url');
    const expiresAt = new Date(Date.now() + this.config.sessionTtlHours * 3600_000);
    const opened = await this.repository.openSession(
      { userId: user.id, passwordHash, tokenHash: hashToken(token), expiresAt },
      tx,
    );
    if (!opened) {
      return null;
    }
    return {
      token,
      expires_at: expiresAt.toISOString(),
      user: toUserView(user),
      organization: toOrganizationView(organization),
    };
  }

  private async organizationOf(user: ConsoleUserRecord, tx?: Tx): Promise<Organization> {
    const organization = await this.repository.organization(user.organizationId, tx);
    if (!organization) {
      throw new Error(`Organization ${user.organizationId} not found`);
    }
    return organization;
  }
}
