import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import type { ConsoleInvite } from './console-invite.entity';
import type { ConsoleUser } from './console-user.entity';
import type { Organization } from './organization.entity';

/**
 * The Console's response bodies. Each class is both the type the mappers return and
 * the schema the OpenAPI document shows, so the two cannot drift.
 */
@ApiSchema({ name: 'User' })
export class UserView {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ format: 'email' })
  email: string;

  @ApiProperty({ format: 'uuid' })
  organization_id: string;

  @ApiProperty({ format: 'date-time' })
  created_at: string;
}

@ApiSchema({ name: 'Organization' })
export class OrganizationView {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty()
  name: string;

  @ApiProperty({ format: 'date-time' })
  created_at: string;
}

/** The signed-in user and organization (`GET /api/v1/console/me`). */
@ApiSchema({ name: 'Me' })
export class MeView {
  @ApiProperty({ type: UserView })
  user: UserView;

  @ApiProperty({ type: OrganizationView })
  organization: OrganizationView;
}

/** A new session: signup, login, accepting an invitation. */
@ApiSchema({ name: 'Session' })
export class SessionView extends MeView {
  @ApiProperty({
    description: 'The session token (also set as the HttpOnly `a2a_session` cookie). Send as `Authorization: Bearer`.',
  })
  token: string;

  @ApiProperty({ format: 'date-time' })
  expires_at: string;
}

@ApiSchema({ name: 'InvitingOrganization' })
class InvitingOrganizationView {
  @ApiProperty() name: string;
}

/** What an invitation link opens, before it is accepted (`POST /api/v1/console/invites/lookup`). */
@ApiSchema({ name: 'Invitation' })
export class InvitationView {
  @ApiProperty({ format: 'email', description: 'The email invited: the new member signs in with it.' }) email: string;
  @ApiProperty({ type: InvitingOrganizationView }) organization: { name: string };
  @ApiProperty({ format: 'date-time' }) expires_at: string;
}

/** A member of the organization (a Console user). */
@ApiSchema({ name: 'Member' })
export class MemberView {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ format: 'email' })
  email: string;

  @ApiProperty({ format: 'date-time' })
  created_at: string;

  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'When a session last opened; null if never.',
  })
  last_login_at: string | null;
}

@ApiSchema({ name: 'MemberList' })
export class MemberList {
  @ApiProperty({ type: [MemberView] })
  members: MemberView[];

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Pass as `cursor` for the next page; null on the last page.',
  })
  next_cursor: string | null;
}

/** An open invitation. Its code is never shown again after creation. */
@ApiSchema({ name: 'Invite' })
export class InviteView {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ format: 'email' })
  email: string;

  @ApiProperty({
    type: String,
    format: 'uuid',
    nullable: true,
    description: 'The member who invited; null once removed.',
  })
  invited_by: string | null;

  @ApiProperty({ format: 'date-time' })
  created_at: string;

  @ApiProperty({ format: 'date-time' })
  expires_at: string;
}

/** A new invitation: the link carrying its code, shown only here. */
@ApiSchema({ name: 'CreatedInvite' })
export class CreatedInviteView extends InviteView {
  @ApiProperty({
    format: 'uri',
    description:
      'The link to give the invited person: `{base}/console/accept#<code>`. Shown only here; the code is stored hashed.',
  })
  url: string;
}

@ApiSchema({ name: 'InviteList' })
export class InviteList {
  @ApiProperty({ type: [InviteView] })
  invites: InviteView[];

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Pass as `cursor` for the next page; null on the last page.',
  })
  next_cursor: string | null;
}

export const toUserView = (user: Pick<ConsoleUser, 'id' | 'email' | 'organizationId' | 'createdAt'>): UserView => ({
  id: user.id,
  email: user.email,
  organization_id: user.organizationId,
  created_at: user.createdAt.toISOString(),
});

export const toOrganizationView = (org: Organization): OrganizationView => ({
  id: org.id,
  name: org.name,
  created_at: org.createdAt.toISOString(),
});

export const toMemberView = (user: Pick<ConsoleUser, 'id' | 'email' | 'createdAt' | 'lastLoginAt'>): MemberView => ({
  id: user.id,
  email: user.email,
  created_at: user.createdAt.toISOString(),
  last_login_at: user.lastLoginAt?.toISOString() ?? null,
});

export const toInviteView = (
  invite: Pick<ConsoleInvite, 'id' | 'email' | 'invitedBy' | 'createdAt' | 'expiresAt'>,
): InviteView => ({
  id: invite.id,
  email: invite.email,
  invited_by: invite.invitedBy,
  created_at: invite.createdAt.toISOString(),
  expires_at: invite.expiresAt.toISOString(),
});
