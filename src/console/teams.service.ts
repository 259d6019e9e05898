import { Inject, Injectable } from '@nestjs/common';
import { createHash, randomBytes } from 'node:crypto';
import * as bcrypt from 'bcrypt';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { conflict, forbidden, notFound } from '../common/app-error';
import type { PageQuery } from '../common/pagination';
import { Database, type Tx } from '../database/database';
import type { ConsolePrincipal } from '../common/principal';
import { AuditService } from '../audit/audit.service';
import { EventsService } from '../events/events.service';
import { ConsoleRepository, type InviteRecord } from './console.repository';
import { ConsoleService, PASSWORD_SIGN_IN_DISABLED } from './console.service';
import {
  toInviteView,
  toMemberView,
  type CreatedInviteView,
  type InvitationView,
  type InviteList,
  type MemberList,
  type MemberView,
  type SessionView,
} from './console.view';
import type { Organization } from './organization.entity';

/** Invitation codes: 256 bits of CSPRNG randomness, shown once (in the link), stored as SHA-256. */
const CODE_PREFIX = 'a2a_inv_';
const hashCode = (code: string) => createHash('sha256').update(code).digest();

/** An invitation as the audit log names it: its id and the invited email. */
const inviteTarget = (invite: { id: string; email: string }) => ({
  type: 'invitation',
  id: invite.id,
  label: invite.email,
});

/**
 * Teams (docs/api.md §13): invitations, members, and removing them. Every change that
 * counts members or invitations locks the organization's row first, so the limits
 * and "never the last member" hold under concurrent requests.
 */
@Injectable()
export class TeamsService {
  private readonly baseUrl: string;

  constructor(
    private readonly db: Database,
    private readonly repository: ConsoleRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly console: ConsoleService,
    private readonly events: EventsService,
    private readonly audit: AuditService,
  ) {
    this.baseUrl = config.publicBaseUrl;
  }

  async invite(principal: ConsolePrincipal, email: string): Promise<CreatedInviteView> {
    const code = CODE_PREFIX + randomBytes(32).toString('base64url');
    return this.db.transaction(async (tx) => {
      await this.lockOrganization(tx, principal.organizationId);
      // Only the inviter's own members are refused: they see them anyway. Whether the
      // address has an account elsewhere is not the inviter's to learn (docs/api.md §13).
      if (await this.repository.isMemberEmail(principal.organizationId, email, tx)) {
        throw conflict('email_taken', 'That email is already a member of your organization.');
      }
      const { members, invites } = await this.repository.countMembersAndOpenInvites(principal.organizationId, tx);
      if (members >= this.config.console.maxMembers) {
        throw conflict('member_limit', `An organization has at most ${this.config.console.maxMembers} members.`);
      }
      if (invites >= this.config.console.maxOpenInvites) {
        throw conflict(
          'invite_limit',
          `An organization has at most ${this.config.console.maxOpenInvites} open invitations; withdraw one first.`,
        );
      }
      const saved = await this.repository.insertInvite(
        {
          organizationId: principal.organizationId,
          email,
          codeHash: hashCode(code),
          invitedBy: principal.id,
          expiresAt: new Date(Date.now() + this.config.console.inviteTtlHours * 3600_000),
        },
        tx,
      );
      const view = toInviteView(saved);
      await this.audit.record(tx, {
        organizationId: principal.organizationId,
        action: 'invitation.created',
        target: inviteTarget(saved),
        after: view,
      });
      return { ...view, url: `${this.baseUrl}/console/accept#${code}` };
    });
  }

  /** Open invitations (not accepted, not expired), newest first. */
  async listInvites(principal: ConsolePrincipal, query: PageQuery): Promise<InviteList> {
    const page = await this.repository.listOpenInvites(principal.organizationId, query);
    return { invites: page.items.map(toInviteView), next_cursor: page.nextCursor };
  }

  /** Withdraws an open invitation; its link stops working. */
  async withdrawInvite(principal: ConsolePrincipal, id: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      const withdrawn = await this.repository.deleteOpenInvite(principal.organizationId, id, tx);
      if (!withdrawn) {
        throw notFound('invite_not_found', 'No open invitation with that id.');
      }
      await this.audit.record(tx, {
        organizationId: principal.organizationId,
        action: 'invitation.revoked',
        target: inviteTarget(withdrawn),
        before: toInviteView(withdrawn),
      });
    });
  }

  /** The invitation a code opens, as its accept page names it (docs/api.md §13); 404 as accepting it would be. */
  async invitation(code: string): Promise<InvitationView> {
    const found = await this.repository.openInvitation(hashCode(code));
    if (!found) {
      throw inviteCodeInvalid();
    }
    return {
      email: found.email,
      organization: { name: found.organizationName },
      expires_at: found.expiresAt.toISOString(),
    };
  }

  /**
   * Accepts an invitation (no credential): creates the Console user in the inviting
   * organization and opens a session. The code works once, before it expires; an
   * organization that has turned password sign-in off takes its members through
   * single sign-on only.
   */
  async accept(code: string, password: string): Promise<SessionView> {
    const passwordHash = await bcrypt.hash(password, this.config.bcryptCost);
    return this.console.withUniqueEmail(() =>
      this.db.transaction(async (tx) => {
        // The row lock makes it single use: a concurrent acceptance waits, then finds it accepted.
        const found = await this.repository.lockOpenInvite(hashCode(code), tx);
        if (!found) {
          throw inviteCodeInvalid();
        }
        return this.joinByInvite(found, passwordHash, tx, { password: true });
      }),
    );
  }

  /**
   * Makes the invited person a member of the inviting organization and opens their
   * session, in `tx` (which holds the invitation's lock): accepting with the code and a
   * password, or signing in with the provider as the invited address (SsoService).
   * `passwordHash` is the new user's: the one they chose, or one nobody knows.
   */
  async joinByInvite(
    found: InviteRecord,
    passwordHash: string,
    tx: Tx,
    how: { password: boolean },
  ): Promise<SessionView> {
    const organization = await this.lockOrganization(tx, found.organizationId);
    if (how.password && !organization.passwordSignIn) {
      throw forbidden('password_sign_in_disabled', PASSWORD_SIGN_IN_DISABLED);
    }
    const { user, session, member } = await this.addMember(
      organization,
      found.email,
      passwordHash,
      tx,
      found.invitedBy,
    );
    await this.repository.markInviteAccepted(found.id, user.id, tx);
    await this.audit.record(tx, {
      organizationId: found.organizationId,
      actor: { kind: 'console', id: user.id },
      action: how.password ? 'invitation.accepted' : 'invitation.accepted_sso',
      target: inviteTarget(found),
      after: member,
    });
    return session;
  }

  /**
   * Makes a person whose verified email is of one of the organization's email domains
   * a member at their first single sign-on (docs/api.md §13), and opens their session.
   */
  async joinByDomain(organizationId: string, email: string, passwordHash: string, tx: Tx): Promise<SessionView> {
    const organization = await this.lockOrganization(tx, organizationId);
    const { user, session, member } = await this.addMember(organization, email, passwordHash, tx, null);
    await this.audit.record(tx, {
      organizationId,
      actor: { kind: 'console', id: user.id },
      action: 'member.joined_by_domain',
      target: { type: 'member', id: member.id, label: member.email },
      after: member,
    });
    return session;
  }

  /**
   * A new member of the (locked) organization, under its member limit, with their first
   * session; `console.member_added` names who invited them (null: joined by their domain).
   */
  private async addMember(
    organization: Organization,
    email: string,
    passwordHash: string,
    tx: Tx,
    invitedBy: string | null,
  ) {
    await this.console.refuseTakenEmail(email, tx);
    const members = await this.repository.countMembers(organization.id, tx);
    if (members >= this.config.console.maxMembers) {
      throw conflict('member_limit', `An organization has at most ${this.config.console.maxMembers} members.`);
    }
    const user = await this.repository.insertUser({ organizationId: organization.id, email, passwordHash }, tx);
    // The password was set in this transaction: nothing can have changed it.
    const session = (await this.console.openSession(user, passwordHash, organization, tx))!;
    const member = toMemberView((await this.repository.user(user.id, tx))!);
    await this.events.emit(tx, {
      type: 'console.member_added',
      organizationId: organization.id,
      data: { member, invited_by: invitedBy },
    });
    return { user, session, member };
  }

  /** The organization's members, newest first. */
  async listMembers(principal: ConsolePrincipal, query: PageQuery): Promise<MemberList> {
    const page = await this.repository.listMembers(principal.organizationId, query);
    return { members: page.items.map(toMemberView), next_cursor: page.nextCursor };
  }

  /**
   * Removes a member: the user and (by cascade) every session of theirs go in one
   * transaction, so their next request is refused. Never the last member.
   */
  async removeMember(principal: ConsolePrincipal, id: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      await this.lockOrganization(tx, principal.organizationId);
      const user = await this.repository.member(principal.organizationId, id, tx);
      if (!user) {
        throw notFound('member_not_found', 'No member of your organization with that id.');
      }
      const members = await this.repository.countMembers(principal.organizationId, tx);
      if (members <= 1) {
        throw conflict('last_member', 'The last member of an organization cannot be removed.');
      }
      const member: MemberView = toMemberView(user);
      await this.repository.deleteUser(id, tx);
      await this.events.emit(tx, {
        type: 'console.member_removed',
        organizationId: principal.organizationId,
        data: { member, removed_by: principal.id },
      });
      await this.audit.record(tx, {
        organizationId: principal.organizationId,
        action: 'member.removed',
        target: { type: 'member', id: member.id, label: member.email },
        before: member,
      });
    });
  }

  private async lockOrganization(tx: Tx, organizationId: string): Promise<Organization> {
    const organization = await this.repository.lockOrganization(organizationId, tx);
    if (!organization) {
      throw new Error(`Organization ${organizationId} not found`);
    }
    return organization;
  }
}

function inviteCodeInvalid() {
  return notFound('invite_code_invalid', 'The invitation is unknown, already used, withdrawn or expired.');
}
