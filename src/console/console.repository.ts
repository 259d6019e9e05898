import { Injectable } from '@nestjs/common';
import { creationPosition, keyset, type PageQuery } from '../common/pagination';
import { Database, type Tx } from '../database/database';
import { DummyValue, GenerateSql } from '../database/generate-sql';
import type { RowOf } from '../database/row';
import { sql } from '../database/sql';
import type { ConsoleInvite } from './console-invite.entity';
import type { ConsoleSession } from './console-session.entity';
import type { ConsoleUser } from './console-user.entity';
import { emailKey } from '../common/email-key';
import type { Organization } from './organization.entity';

/** A Console user as reads show it: everything but the password hash (and the email's comparison key). */
export type ConsoleUserRecord = Omit<ConsoleUser, 'passwordHash' | 'emailKey'>;
/** An invitation as reads show it: everything but the code hash. */
export type InviteRecord = Omit<ConsoleInvite, 'codeHash' | 'emailKey' | 'acceptedAt' | 'acceptedBy'>;

type OrganizationRow = RowOf<Organization>;
type UserRow = Omit<RowOf<ConsoleUser>, 'password_hash' | 'email_key'>;
type InviteRow = Pick<
  RowOf<ConsoleInvite>,
  'id' | 'organization_id' | 'email' | 'invited_by' | 'created_at' | 'expires_at'
>;
/** A live session and its user, as authentication needs them. */
export interface ActiveSession {
  sessionId: ConsoleSession['id'];
  userId: ConsoleUser['id'];
  organizationId: ConsoleUser['organizationId'];
}

const USER_COLUMNS = sql.raw('id, organization_id, email, created_at, last_login_at');
const INVITE_COLUMNS = sql.raw('id, organization_id, email, invited_by, created_at, expires_at');

const ORGANIZATION_COLUMNS = sql.raw(
  'id, name, created_at, max_key_lifetime_days, password_sign_in, require_verified_upstream_cards',
);

const toOrganization = (row: OrganizationRow): Organization => ({
  id: row.id,
  name: row.name,
  createdAt: row.created_at,
  maxKeyLifetimeDays: row.max_key_lifetime_days,
  passwordSignIn: row.password_sign_in,
  requireVerifiedUpstreamCards: row.require_verified_upstream_cards,
});
const toUser = (row: UserRow): ConsoleUserRecord => ({
  id: row.id,
  organizationId: row.organization_id,
  email: row.email,
  createdAt: row.created_at,
  lastLoginAt: row.last_login_at,
});
const toInvite = (row: InviteRow): InviteRecord => ({
  id: row.id,
  organizationId: row.organization_id,
  email: row.email,
  invitedBy: row.invited_by,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
});

/**
 * The Console's tables: organizations, console_users, console_sessions, console_invites.
 * Session checks run on every Console request, as named prepared statements.
 */
@Injectable()
export class ConsoleRepository {
  constructor(private readonly db: Database) {}

  // organizations

  @GenerateSql({ params: [DummyValue.STRING] })
  async insertOrganization(name: string, tx?: Tx): Promise<Organization> {
    const row = await this.db.one<OrganizationRow>(
      sql`INSERT INTO organizations (name) VALUES (${name}) RETURNING ${ORGANIZATION_COLUMNS}`,
      tx,
    );
    return toOrganization(row!);
  }

  @GenerateSql({ params: [DummyValue.UUID] })
  async organization(id: string, tx?: Tx): Promise<Organization | null> {
    const row = await this.db.one<OrganizationRow>(
      sql`SELECT ${ORGANIZATION_COLUMNS} FROM organizations WHERE id = ${id}`,
      tx,
    );
    return row ? toOrganization(row) : null;
  }

  /** The organization's row, locked for the transaction (teams serialize member and invitation counts on it). */
  @GenerateSql({ params: [DummyValue.UUID] })
  async lockOrganization(id: string, tx?: Tx): Promise<Organization | null> {
    const row = await this.db.one<OrganizationRow>(
      sql`SELECT ${ORGANIZATION_COLUMNS} FROM organizations WHERE id = ${id} FOR UPDATE`,
      tx,
    );
    return row ? toOrganization(row) : null;
  }

  /** The organization's settings (docs/api.md §2, key lifetimes; §13, single sign-on; §14, verified upstream cards): `null` clears one. */
  @GenerateSql({
    params: [DummyValue.UUID, { maxKeyLifetimeDays: 90, passwordSignIn: false, requireVerifiedUpstreamCards: true }],
  })
  async updateOrganizationSettings(
    id: string,
    changes: Partial<Pick<Organization, 'maxKeyLifetimeDays' | 'passwordSignIn' | 'requireVerifiedUpstreamCards'>>,
    tx?: Tx,
  ): Promise<void> {
    const sets = sql.join([
      changes.maxKeyLifetimeDays !== undefined
        ? sql`max_key_lifetime_days = ${changes.maxKeyLifetimeDays}::int`
        : sql.empty,
      changes.passwordSignIn !== undefined ? sql`password_sign_in = ${changes.passwordSignIn}` : sql.empty,
      changes.requireVerifiedUpstreamCards !== undefined
        ? sql`require_verified_upstream_cards = ${changes.requireVerifiedUpstreamCards}::boolean`
        : sql.empty,
    ]);
    if (sets.isEmpty) {
      return;
    }
    await this.db.execute(sql`UPDATE organizations SET ${sets} WHERE id = ${id}`, tx);
  }

  /** Organization names by id, in one prepared statement (Agent Cards name their provider). */
  @GenerateSql({ params: [[DummyValue.UUID]] })
  async organizationNames(ids: readonly string[]): Promise<Map<string, string>> {
    const rows = await this.db.prepared<Pick<OrganizationRow, 'id' | 'name'>>(
      'organization_names',
      sql`SELECT id, name FROM organizations WHERE id = ANY(${ids}::uuid[])`,
    );
    return new Map(rows.map((row) => [row.id, row.name]));
  }

  /** The organizations called `name` (case-insensitive; names need not be unique): the directory's `organization` filter. */
  @GenerateSql({ params: [DummyValue.STRING] })
  async organizationIdsNamed(name: string): Promise<string[]> {
    const rows = await this.db.rows<Pick<OrganizationRow, 'id'>>(
      sql`SELECT id FROM organizations WHERE lower(name) = lower(${name})`,
    );
    return rows.map((row) => row.id);
  }

  // console_users

  /** Whether a Console user has that email, however it is spelled (email-key.ts). */
  @GenerateSql({ params: [DummyValue.STRING] })
  async emailTaken(email: string, tx?: Tx): Promise<boolean> {
    const row = await this.db.one<{ taken: boolean }>(
      sql`SELECT EXISTS (SELECT 1 FROM console_users WHERE email_key = ${emailKey(email)}) AS taken`,
      tx,
    );
    return row!.taken;
  }

  /** Whether a member of the organization has that email, however it is spelled. */
  @GenerateSql({ params: [DummyValue.UUID, DummyValue.STRING] })
  async isMemberEmail(organizationId: string, email: string, tx?: Tx): Promise<boolean> {
    const row = await this.db.one<{ member: boolean }>(
      sql`SELECT EXISTS (SELECT 1 FROM console_users
                          WHERE organization_id = ${organizationId} AND email_key = ${emailKey(email)}) AS member`,
      tx,
    );
    return row!.member;
  }

  @GenerateSql({
    params: [{ organizationId: DummyValue.UUID, email: DummyValue.STRING, passwordHash: DummyValue.STRING }],
  })
  async insertUser(
    user: { organizationId: string; email: string; passwordHash: string },
    tx?: Tx,
  ): Promise<ConsoleUserRecord> {
    const row = await this.db.one<UserRow>(
      sql`INSERT INTO console_users (organization_id, email, email_key, password_hash)
          VALUES (${user.organizationId}, ${user.email}, ${emailKey(user.email)}, ${user.passwordHash})
          RETURNING ${USER_COLUMNS}`,
      tx,
    );
    return toUser(row!);
  }

  @GenerateSql({ params: [DummyValue.UUID] })
  async user(id: string, tx?: Tx): Promise<ConsoleUserRecord | null> {
    const row = await this.db.one<UserRow>(sql`SELECT ${USER_COLUMNS} FROM console_users WHERE id = ${id}`, tx);
    return row ? toUser(row) : null;
  }

  /** A user with the password hash, to check a password: by email, however spelled (login), or by id (changing it). */
  @GenerateSql(
    { name: 'by email', params: [{ email: DummyValue.STRING }] },
    { name: 'by id', params: [{ id: DummyValue.UUID }] },
  )
  async userWithPassword(
    by: { email: string } | { id: string },
  ): Promise<(ConsoleUserRecord & { passwordHash: string }) | null> {
    const where = 'email' in by ? sql`email_key = ${emailKey(by.email)}` : sql`id = ${by.id}`;
    const row = await this.db.one<UserRow & Pick<RowOf<ConsoleUser>, 'password_hash'>>(
      sql`SELECT ${USER_COLUMNS}, password_hash FROM console_users WHERE ${where} LIMIT 1`,
    );
    return row ? { ...toUser(row), passwordHash: row.password_hash } : null;
  }

  @GenerateSql({ params: [DummyValue.UUID, DummyValue.STRING] })
  async setPassword(userId: string, passwordHash: string, tx?: Tx): Promise<void> {
    await this.db.execute(sql`UPDATE console_users SET password_hash = ${passwordHash} WHERE id = ${userId}`, tx);
  }

  /** A member of the organization, or null. */
  @GenerateSql({ params: [DummyValue.UUID, DummyValue.UUID_2] })
  async member(organizationId: string, id: string, tx?: Tx): Promise<ConsoleUserRecord | null> {
    const row = await this.db.one<UserRow>(
      sql`SELECT ${USER_COLUMNS} FROM console_users WHERE id = ${id} AND organization_id = ${organizationId}`,
      tx,
    );
    return row ? toUser(row) : null;
  }

  @GenerateSql({ params: [DummyValue.UUID] })
  async countMembers(organizationId: string, tx?: Tx): Promise<number> {
    const row = await this.db.one<{ members: number }>(
      sql`SELECT count(*)::int AS members FROM console_users WHERE organization_id = ${organizationId}`,
      tx,
    );
    return row!.members;
  }

  /** Members and open invitations (not accepted, not expired) of the organization. */
  @GenerateSql({ params: [DummyValue.UUID] })
  async countMembersAndOpenInvites(organizationId: string, tx?: Tx): Promise<{ members: number; invites: number }> {
    const row = await this.db.one<{ members: number; invites: number }>(
      sql`SELECT (SELECT count(*) FROM console_users WHERE organization_id = ${organizationId})::int AS members,
                 (SELECT count(*) FROM console_invites
                   WHERE organization_id = ${organizationId} AND accepted_at IS NULL AND expires_at > now())::int AS invites`,
      tx,
    );
    return row!;
  }

  /** The organization's members, newest first. */
  @GenerateSql({ params: [DummyValue.UUID, { limit: 50 }] })
  async listMembers(
    organizationId: string,
    query: PageQuery,
  ): Promise<{ items: ConsoleUserRecord[]; nextCursor: string | null }> {
    const page = keyset('u', query);
    const rows = await this.db.rows<UserRow>(
      sql`SELECT u.id, u.organization_id, u.email, u.created_at, u.last_login_at FROM console_users u
           WHERE u.organization_id = ${organizationId} AND ${page.after} ${page.tail}`,
    );
    const { items, nextCursor } = page.cut(rows, creationPosition);
    return { items: items.map(toUser), nextCursor };
  }

  /** Deletes a user; their sessions go by cascade. */
  @GenerateSql({ params: [DummyValue.UUID] })
  async deleteUser(id: string, tx?: Tx): Promise<void> {
    await this.db.execute(sql`DELETE FROM console_users WHERE id = ${id}`, tx);
  }

  // console_sessions

  /**
   * Opens a session and stamps the user's last sign-in, only if the user's password
   * hash is still `passwordHash`, the one the caller verified; false when it is not.
   * The UPDATE locks the user's row, so a password change either waits for this
   * transaction (and then revokes the session it opened) or this waits for the change
   * and, reading the row as the change left it, opens nothing: no session outlives
   * the password it was opened with.
   */
  @GenerateSql({
    params: [
      {
        userId: DummyValue.UUID,
        passwordHash: DummyValue.STRING,
        tokenHash: DummyValue.BUFFER,
        expiresAt: DummyValue.DATE,
      },
    ],
  })
  async openSession(
    session: { userId: string; passwordHash: string; tokenHash: Buffer; expiresAt: Date },
    tx?: Tx,
  ): Promise<boolean> {
    const opened = await this.db.execute(
      sql`WITH verified AS (
            UPDATE console_users SET last_login_at = now()
             WHERE id = ${session.userId} AND password_hash = ${session.passwordHash} RETURNING id)
          INSERT INTO console_sessions (user_id, token_hash, expires_at)
          SELECT id, ${session.tokenHash}, ${session.expiresAt} FROM verified`,
      tx,
    );
    return opened === 1;
  }

  /** The live session (not revoked, not expired) with that token hash, and its user. */
  @GenerateSql({ params: [DummyValue.BUFFER] })
  async activeSession(tokenHash: Buffer): Promise<ActiveSession | null> {
    const [row] = await this.db.prepared<ActiveSession>(
      'verify_console_session',
      sql`SELECT s.id AS "sessionId", u.id AS "userId", u.organization_id AS "organizationId"
            FROM console_sessions s JOIN console_users u ON u.id = s.user_id
           WHERE s.token_hash = ${tokenHash} AND s.revoked_at IS NULL AND s.expires_at > now()`,
    );
    return row ?? null;
  }

  @GenerateSql({ params: [DummyValue.UUID] })
  async isSessionActive(sessionId: string): Promise<boolean> {
    const rows = await this.db.prepared<{ active: boolean }>(
      'console_session_active',
      sql`SELECT true AS active FROM console_sessions WHERE id = ${sessionId} AND revoked_at IS NULL AND expires_at > now()`,
    );
    return rows.length > 0;
  }

  @GenerateSql({ params: [DummyValue.UUID] })
  async revokeSession(sessionId: string): Promise<void> {
    await this.db.execute(sql`UPDATE console_sessions SET revoked_at = now() WHERE id = ${sessionId}`);
  }

  /** Ends every live session of the user but one. */
  @GenerateSql({ params: [DummyValue.UUID, DummyValue.UUID_2] })
  async revokeOtherSessions(userId: string, keepSessionId: string, tx?: Tx): Promise<void> {
    await this.db.execute(
      sql`UPDATE console_sessions SET revoked_at = now() WHERE user_id = ${userId} AND id <> ${keepSessionId} AND revoked_at IS NULL`,
      tx,
    );
  }

  // console_invites

  @GenerateSql({
    params: [
      {
        organizationId: DummyValue.UUID,
        email: DummyValue.STRING,
        codeHash: DummyValue.BUFFER,
        invitedBy: null,
        expiresAt: DummyValue.DATE,
      },
    ],
  })
  async insertInvite(
    invite: { organizationId: string; email: string; codeHash: Buffer; invitedBy: string | null; expiresAt: Date },
    tx?: Tx,
  ): Promise<InviteRecord> {
    const row = await this.db.one<InviteRow>(
      sql`INSERT INTO console_invites (organization_id, email, email_key, code_hash, invited_by, expires_at)
          VALUES (${invite.organizationId}, ${invite.email}, ${emailKey(invite.email)}, ${invite.codeHash},
                  ${invite.invitedBy}, ${invite.expiresAt})
          RETURNING ${INVITE_COLUMNS}`,
      tx,
    );
    return toInvite(row!);
  }

  /** Open invitations (not accepted, not expired), newest first. */
  @GenerateSql({ params: [DummyValue.UUID, { limit: 50 }] })
  async listOpenInvites(
    organizationId: string,
    query: PageQuery,
  ): Promise<{ items: InviteRecord[]; nextCursor: string | null }> {
    const page = keyset('i', query);
    const rows = await this.db.rows<InviteRow>(
      sql`SELECT i.id, i.organization_id, i.email, i.invited_by, i.created_at, i.expires_at FROM console_invites i
           WHERE i.organization_id = ${organizationId} AND i.accepted_at IS NULL AND i.expires_at > now() AND ${page.after} ${page.tail}`,
    );
    const { items, nextCursor } = page.cut(rows, creationPosition);
    return { items: items.map(toInvite), nextCursor };
  }

  /** Deletes an open invitation of the organization; false when there is none. */
  @GenerateSql({ params: [DummyValue.UUID, DummyValue.UUID_2] })
  async deleteOpenInvite(organizationId: string, id: string, tx?: Tx): Promise<InviteRecord | null> {
    const row = await this.db.one<InviteRow>(
      sql`DELETE FROM console_invites WHERE id = ${id} AND organization_id = ${organizationId} AND accepted_at IS NULL RETURNING ${INVITE_COLUMNS}`,
      tx,
    );
    return row ? toInvite(row) : null;
  }

  /** What an open invitation's link shows before it is accepted: the email invited and the organization. */
  @GenerateSql({ params: [DummyValue.BUFFER] })
  async openInvitation(codeHash: Buffer): Promise<{ email: string; organizationName: string; expiresAt: Date } | null> {
    return this.db.one(
      sql`SELECT i.email, o.name AS "organizationName", i.expires_at AS "expiresAt"
            FROM console_invites i JOIN organizations o ON o.id = i.organization_id
           WHERE i.code_hash = ${codeHash} AND i.accepted_at IS NULL AND i.expires_at > now()`,
    );
  }

  /** The open invitation with that code hash, locked for the transaction (a code works once). */
  @GenerateSql({ params: [DummyValue.BUFFER] })
  async lockOpenInvite(codeHash: Buffer, tx?: Tx): Promise<InviteRecord | null> {
    const row = await this.db.one<InviteRow>(
      sql`SELECT ${INVITE_COLUMNS} FROM console_invites
           WHERE code_hash = ${codeHash} AND accepted_at IS NULL AND expires_at > now() FOR UPDATE`,
      tx,
    );
    return row ? toInvite(row) : null;
  }

  /**
   * The newest open invitation to the address (however it is spelled), locked for the
   * transaction: a person who signs in with a verified email accepts it (docs/api.md §13).
   */
  @GenerateSql({ params: [DummyValue.STRING] })
  async lockOpenInviteForEmail(email: string, tx?: Tx): Promise<InviteRecord | null> {
    const row = await this.db.one<InviteRow>(
      sql`SELECT ${INVITE_COLUMNS} FROM console_invites
           WHERE email_key = ${emailKey(email)} AND accepted_at IS NULL AND expires_at > now()
           ORDER BY created_at DESC LIMIT 1 FOR UPDATE`,
      tx,
    );
    return row ? toInvite(row) : null;
  }

  @GenerateSql({ params: [DummyValue.UUID, DummyValue.UUID_2] })
  async markInviteAccepted(id: string, userId: string, tx?: Tx): Promise<void> {
    await this.db.execute(
      sql`UPDATE console_invites SET accepted_at = now(), accepted_by = ${userId} WHERE id = ${id}`,
      tx,
    );
  }

  // retention

  /** Retention: deletes up to `batch` sessions past their expiry (they can never be used again); how many went. */
  @GenerateSql({ params: [500] })
  async pruneExpiredSessions(batch: number): Promise<number> {
    return this.db.execute(sql`
      DELETE FROM console_sessions WHERE id IN (
        SELECT id FROM console_sessions WHERE expires_at < now() LIMIT ${batch} FOR UPDATE SKIP LOCKED)`);
  }

  /**
   * Retention: deletes up to `batch` invitations past their expiry — open ones can no
   * longer be accepted, accepted ones are read by nothing; how many went.
   */
  @GenerateSql({ params: [500] })
  async pruneExpiredInvites(batch: number): Promise<number> {
    return this.db.execute(sql`
      DELETE FROM console_invites WHERE id IN (
        SELECT id FROM console_invites WHERE expires_at < now() LIMIT ${batch} FOR UPDATE SKIP LOCKED)`);
  }
}
