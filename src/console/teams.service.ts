import { Inject, Injectable } from '@nestjs/common';
import { createHash, randomBytes } from 'node:crypto';
import * as bcrypt from 'bcrypt';
import { DataSource, type EntityManager } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { conflict, notFound } from '../common/app-error';
import { creationPosition, decodeCursor, keysetAfter, pageLimit, pageOf, type PageQuery } from '../common/pagination';
import type { ConsolePrincipal } from '../auth/principal';
import { EventsService } from '../events/events.service';
import { ConsoleInvite } from './console-invite.entity';
import { ConsoleUser } from './console-user.entity';
import { ConsoleService } from './console.service';
import {
  toInviteView, toMemberView, type CreatedInviteView, type InviteList, type MemberList, type MemberView, type SessionView,
} from './console.view';
import { Organization } from './organization.entity';

/** Invitation codes: 256 bits of CSPRNG randomness, shown once (in the link), stored as SHA-256. */
const CODE_PREFIX = 'a2a_inv_';
const hashCode = (code: string) => createHash('sha256').update(code).digest();

const EMAIL_TAKEN = 'A Console user with that email already exists.';

/**
 * Teams (CONTRACT §13): invitations, members, and removing them. Every change that
 * counts members or invitations locks the organization's row first, so the limits
 * and "never the last member" hold under concurrent requests.
 */
@Injectable()
export class TeamsService {
  private readonly baseUrl: string;

  constructor(
    private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly console: ConsoleService,
    private readonly events: EventsService,
  ) {
    this.baseUrl = config.publicBaseUrl;
  }

  async invite(principal: ConsolePrincipal, email: string): Promise<CreatedInviteView> {
    const code = CODE_PREFIX + randomBytes(32).toString('base64url');
    return this.dataSource.transaction(async (em) => {
      await this.lockOrganization(em, principal.organizationId);
      if (await this.emailTaken(em, email)) throw conflict('email_taken', EMAIL_TAKEN);
      const [{ members, invites }] = (await em.query(
        `SELECT (SELECT count(*) FROM console_users WHERE organization_id = $1)::int AS members,
                (SELECT count(*) FROM console_invites WHERE organization_id = $1 AND accepted_at IS NULL AND expires_at > now())::int AS invites`,
        [principal.organizationId],
      )) as Array<{ members: number; invites: number }>;
      if (members >= this.config.console.maxMembers) {
        throw conflict('member_limit', `An organization has at most ${this.config.console.maxMembers} members.`);
      }
      if (invites >= this.config.console.maxOpenInvites) {
        throw conflict('invite_limit', `An organization has at most ${this.config.console.maxOpenInvites} open invitations; withdraw one first.`);
      }
      const repo = em.getRepository(ConsoleInvite);
      const saved = await repo.save(repo.create({
        organizationId: principal.organizationId,
        email,
        codeHash: hashCode(code),
        invitedBy: principal.id,
        expiresAt: new Date(Date.now() + this.config.console.inviteTtlHours * 3600_000),
      }));
      return { ...toInviteView(saved), url: `${this.baseUrl}/console/accept#${code}` };
    });
  }

  /** Open invitations (not accepted, not expired), newest first. */
  async listInvites(principal: ConsolePrincipal, query: PageQuery): Promise<InviteList> {
    const limit = pageLimit(query);
    const params: unknown[] = [principal.organizationId];
    const where = ['i.organization_id = $1', 'i.accepted_at IS NULL', 'i.expires_at > now()', ...keysetAfter('i', decodeCursor(query.cursor), params)];
    params.push(limit + 1);
    const rows = (await this.dataSource.query(
      `SELECT i.id, i.email, i.invited_by, i.created_at, i.expires_at FROM console_invites i
        WHERE ${where.join(' AND ')} ORDER BY i.created_at DESC, i.id DESC LIMIT $${params.length}`,
      params,
    )) as Array<{ id: string; email: string; invited_by: string | null; created_at: Date; expires_at: Date }>;
    const page = pageOf(rows, limit, creationPosition);
    return {
      invites: page.items.map((row) => ({
        id: row.id, email: row.email, invited_by: row.invited_by, created_at: row.created_at.toISOString(), expires_at: row.expires_at.toISOString(),
      })),
      next_cursor: page.nextCursor,
    };
  }

  /** Withdraws an open invitation; its link stops working. */
  async withdrawInvite(principal: ConsolePrincipal, id: string): Promise<void> {
    const result = await this.dataSource.getRepository(ConsoleInvite).createQueryBuilder().delete()
      .where('id = :id AND organization_id = :org AND accepted_at IS NULL', { id, org: principal.organizationId })
      .execute();
    if (!result.affected) throw notFound('invite_not_found', 'No open invitation with that id.');
  }

  /**
   * Accepts an invitation (no credential): creates the Console user in the inviting
   * organization and opens a session. The code works once, before it expires.
   */
  async accept(code: string, password: string): Promise<SessionView> {
    const passwordHash = await bcrypt.hash(password, this.config.bcryptCost);
    try {
      return await this.dataSource.transaction(async (em) => {
        // The row lock makes it single use: a concurrent acceptance waits, then finds it accepted.
        const [found] = (await em.query(
          `SELECT id, organization_id, email, invited_by FROM console_invites
            WHERE code_hash = $1 AND accepted_at IS NULL AND expires_at > now() FOR UPDATE`,
          [hashCode(code)],
        )) as Array<{ id: string; organization_id: string; email: string; invited_by: string | null }>;
        if (!found) throw notFound('invite_code_invalid', 'The invitation is unknown, already used, withdrawn or expired.');
        const organization = await this.lockOrganization(em, found.organization_id);
        if (await this.emailTaken(em, found.email)) throw conflict('email_taken', EMAIL_TAKEN);
        const [{ members }] = (await em.query(
          `SELECT count(*)::int AS members FROM console_users WHERE organization_id = $1`, [found.organization_id],
        )) as Array<{ members: number }>;
        if (members >= this.config.console.maxMembers) {
          throw conflict('member_limit', `An organization has at most ${this.config.console.maxMembers} members.`);
        }
        const users = em.getRepository(ConsoleUser);
        const user = await users.save(users.create({ organizationId: found.organization_id, email: found.email, passwordHash }));
        await em.query(`UPDATE console_invites SET accepted_at = now(), accepted_by = $2 WHERE id = $1`, [found.id, user.id]);
        const session = await this.console.openSession(em, user, organization);
        const member = toMemberView(await users.findOneByOrFail({ id: user.id }));
        await this.events.emit(em, {
          type: 'console.member_added',
          organizationId: found.organization_id,
          data: { member, invited_by: found.invited_by },
        });
        return session;
      });
    } catch (error) {
      // Two acceptances (or a signup) racing for one email: the unique index decides.
      if ((error as { driverError?: { code?: string } }).driverError?.code === '23505') throw conflict('email_taken', EMAIL_TAKEN);
      throw error;
    }
  }

  /** The organization's members, newest first. */
  async listMembers(principal: ConsolePrincipal, query: PageQuery): Promise<MemberList> {
    const limit = pageLimit(query);
    const params: unknown[] = [principal.organizationId];
    const where = ['u.organization_id = $1', ...keysetAfter('u', decodeCursor(query.cursor), params)];
    params.push(limit + 1);
    const rows = (await this.dataSource.query(
      `SELECT u.id, u.email, u.created_at, u.last_login_at FROM console_users u
        WHERE ${where.join(' AND ')} ORDER BY u.created_at DESC, u.id DESC LIMIT $${params.length}`,
      params,
    )) as Array<{ id: string; email: string; created_at: Date; last_login_at: Date | null }>;
    const page = pageOf(rows, limit, creationPosition);
    return {
      members: page.items.map((row) => ({
        id: row.id, email: row.email, created_at: row.created_at.toISOString(), last_login_at: row.last_login_at?.toISOString() ?? null,
      })),
      next_cursor: page.nextCursor,
    };
  }

  /**
   * Removes a member: the user and (by cascade) every session of theirs go in one
   * transaction, so their next request is refused. Never the last member.
   */
  async removeMember(principal: ConsolePrincipal, id: string): Promise<void> {
    await this.dataSource.transaction(async (em) => {
      await this.lockOrganization(em, principal.organizationId);
      const users = em.getRepository(ConsoleUser);
      const user = await users.findOneBy({ id, organizationId: principal.organizationId });
      if (!user) throw notFound('member_not_found', 'No member of your organization with that id.');
      const members = await users.countBy({ organizationId: principal.organizationId });
      if (members <= 1) throw conflict('last_member', 'The last member of an organization cannot be removed.');
      const member: MemberView = toMemberView(user);
      await users.delete({ id });
      await this.events.emit(em, {
        type: 'console.member_removed',
        organizationId: principal.organizationId,
        data: { member, removed_by: principal.id },
      });
    });
  }

  private async lockOrganization(em: EntityManager, organizationId: string): Promise<Organization> {
    return em.getRepository(Organization).createQueryBuilder('o').setLock('pessimistic_write')
      .where('o.id = :id', { id: organizationId }).getOneOrFail();
  }

  private emailTaken(em: EntityManager, email: string): Promise<boolean> {
    return em.getRepository(ConsoleUser).createQueryBuilder('u').where('lower(u.email) = lower(:email)', { email }).getExists();
  }
}
