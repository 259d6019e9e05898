import { Inject, Injectable } from '@nestjs/common';
import { createHash, randomBytes } from 'node:crypto';
import * as bcrypt from 'bcrypt';
import { DataSource, EntityManager } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { badRequest, conflict, forbidden, unauthorized } from '../common/app-error';
import { RateLimitService } from '../limits/rate-limit.service';
import { HotQuery } from '../database/hot-query';
import type { ConsolePrincipal } from '../auth/principal';
import { ConsoleSession } from './console-session.entity';
import { ConsoleUser } from './console-user.entity';
import { Organization } from './organization.entity';
import { toOrganizationView, toUserView, type MeView, type SessionView } from './console.view';

const TOKEN_PREFIX = 'a2a_ses_';
const TOKEN_PATTERN = /^a2a_ses_[A-Za-z0-9_-]{43}$/;
const INVALID_LOGIN = 'The email or password is incorrect.';

const hashToken = (token: string) => createHash('sha256').update(token).digest();

@Injectable()
export class ConsoleService {
  /** Compared against when the email is unknown, so timing does not reveal accounts. */
  private readonly dummyHash: Promise<string>;

  constructor(
    private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly limits: RateLimitService,
    private readonly hot: HotQuery,
  ) {
    this.dummyHash = bcrypt.hash(randomBytes(16).toString('hex'), config.bcryptCost);
  }

  async signup(input: { organization_name: string; email: string; password: string }): Promise<SessionView> {
    if (this.config.consoleSignup === 'closed') {
      throw forbidden('signup_closed', 'Console signup is closed on this service.');
    }
    const { user, organization } = await this.createOrganizationWithUser(input.organization_name, input.email, input.password);
    return this.openSession(this.dataSource.manager, user, organization);
  }

  /** Creates an organization and its first Console user (signup and the bootstrap CLI). */
  async createOrganizationWithUser(
    organizationName: string,
    email: string,
    password: string,
    em?: EntityManager,
  ): Promise<{ user: ConsoleUser; organization: Organization }> {
    const passwordHash = await bcrypt.hash(password, this.config.bcryptCost);
    const work = async (tx: EntityManager) => {
      const taken = await tx.getRepository(ConsoleUser).createQueryBuilder('u').where('lower(u.email) = lower(:email)', { email }).getExists();
      if (taken) throw conflict('email_taken', 'A Console user with that email already exists.');
      const organization = await tx.getRepository(Organization).save(tx.getRepository(Organization).create({ name: organizationName }));
      const user = await tx.getRepository(ConsoleUser).save(
        tx.getRepository(ConsoleUser).create({ organizationId: organization.id, email, passwordHash }),
      );
      return { user, organization };
    };
    try {
      return em ? await work(em) : await this.dataSource.transaction(work);
    } catch (error) {
      // Two signups racing for one email: the unique index decides.
      if ((error as { driverError?: { code?: string } }).driverError?.code === '23505') {
        throw conflict('email_taken', 'A Console user with that email already exists.');
      }
      throw error;
    }
  }

  async login(input: { email: string; password: string }, clientAddress: string): Promise<SessionView> {
    // Failures are counted per (email, client address), in the shared store.
    const throttleKey = `${input.email.toLowerCase()}|${clientAddress}`;
    await this.limits.check('login', throttleKey);

    const user = await this.dataSource
      .getRepository(ConsoleUser)
      .createQueryBuilder('u')
      .addSelect('u.passwordHash')
      .where('lower(u.email) = lower(:email)', { email: input.email })
      .getOne();
    const ok = await bcrypt.compare(input.password, user?.passwordHash ?? (await this.dummyHash));
    if (!user || !ok) {
      await this.limits.penalize('login', throttleKey);
      throw unauthorized('invalid_credentials', INVALID_LOGIN);
    }
    await this.limits.clear('login', throttleKey);
    const organization = await this.dataSource.getRepository(Organization).findOneByOrFail({ id: user.organizationId });
    return this.openSession(this.dataSource.manager, user, organization);
  }

  async logout(principal: ConsolePrincipal): Promise<void> {
    await this.dataSource.getRepository(ConsoleSession).update({ id: principal.sessionId }, { revokedAt: new Date() });
  }

  /**
   * Changes the caller's password after checking the current one; every other
   * session of the caller ends (this one stays). Wrong current passwords count
   * against the login throttle, so a stolen session cannot guess it.
   */
  async changePassword(principal: ConsolePrincipal, input: { current_password: string; new_password: string }): Promise<void> {
    const throttleKey = `password|${principal.id}`;
    await this.limits.check('login', throttleKey);
    const user = await this.dataSource.getRepository(ConsoleUser).createQueryBuilder('u').addSelect('u.passwordHash')
      .where('u.id = :id', { id: principal.id }).getOneOrFail();
    if (!(await bcrypt.compare(input.current_password, user.passwordHash))) {
      await this.limits.penalize('login', throttleKey);
      throw badRequest('wrong_password', 'The current password is incorrect.', [
        { field: 'current_password', message: 'current_password is incorrect' },
      ]);
    }
    await this.limits.clear('login', throttleKey);
    const passwordHash = await bcrypt.hash(input.new_password, this.config.bcryptCost);
    await this.dataSource.transaction(async (em) => {
      await em.getRepository(ConsoleUser).update({ id: principal.id }, { passwordHash });
      await em.query(
        `UPDATE console_sessions SET revoked_at = now() WHERE user_id = $1 AND id <> $2 AND revoked_at IS NULL`,
        [principal.id, principal.sessionId],
      );
    });
  }

  async me(principal: ConsolePrincipal): Promise<MeView> {
    const user = await this.dataSource.getRepository(ConsoleUser).findOneByOrFail({ id: principal.id });
    const organization = await this.dataSource.getRepository(Organization).findOneByOrFail({ id: user.organizationId });
    return { user: toUserView(user), organization: toOrganizationView(organization) };
  }

  /** Organization names by id, in one query (Agent Cards name their provider). */
  async organizationNames(ids: readonly string[]): Promise<Map<string, string>> {
    if (ids.length === 0) return new Map();
    const rows = await this.hot.rows<{ id: string; name: string }>(
      'organization_names',
      `SELECT id, name FROM organizations WHERE id = ANY($1::uuid[])`,
      [[...new Set(ids)]],
    );
    return new Map(rows.map((row) => [row.id, row.name]));
  }

  /** The Console principal behind a session token, or null if unknown, expired or logged out. */
  async verifySession(token: string, viaCookie: boolean): Promise<ConsolePrincipal | null> {
    if (!TOKEN_PATTERN.test(token)) return null;
    const [row] = await this.hot.rows<{ session_id: string; user_id: string; organization_id: string }>(
      'verify_console_session',
      `SELECT s.id AS session_id, u.id AS user_id, u.organization_id
         FROM console_sessions s JOIN console_users u ON u.id = s.user_id
        WHERE s.token_hash = $1 AND s.revoked_at IS NULL AND s.expires_at > now()`,
      [hashToken(token)],
    );
    if (!row) return null;
    return { kind: 'console', id: row.user_id, sessionId: row.session_id, organizationId: row.organization_id, viaCookie };
  }

  /** A new session for a user (signup, login, accepting an invitation); stamps the user's last sign-in. */
  async openSession(em: EntityManager, user: ConsoleUser, organization: Organization): Promise<SessionView> {
    const token = TOKEN_PREFIX + randomBytes(32).toString('base64url');
    const expiresAt = new Date(Date.now() + this.config.sessionTtlHours * 3600_000);
    await em.getRepository(ConsoleSession).insert({ userId: user.id, tokenHash: hashToken(token), expiresAt });
    await em.getRepository(ConsoleUser).update({ id: user.id }, { lastLoginAt: () => 'now()' });
    return { token, expires_at: expiresAt.toISOString(), user: toUserView(user), organization: toOrganizationView(organization) };
  }
}
