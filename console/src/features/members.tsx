import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, call } from '../api';
import { EmptyState, StartWith } from '../empty-state';
import { useFormMutation } from '../form-mutation';
import { pageOf, usePaged } from '../paging';
import { navigate } from '../router';
import type { CreatedInvite, Invitation, Invite, Me, Member, OrganizationSettings } from '../types';
import {
  Check,
  ConfirmButton,
  ErrorNotice,
  Field,
  Loading,
  LoadMore,
  SecretOnce,
  Submit,
  SuccessNotice,
  usePageTitle,
  when,
} from '../ui';
import { ME, SsoLink, useMe, useSsoConfig, validateEmail } from './auth';

export function MembersPage() {
  usePageTitle('Members');
  const me = useMe();
  return (
    <>
      <h1>Members</h1>
      <p className="muted">
        Everyone in {me.data?.organization.name ?? 'the organization'} has the same authority. Invite people by link:
        there is no mail server, so you copy the link and send it yourself.
      </p>
      <div className="columns">
        <div>
          <MemberList />
          <InviteList />
        </div>
        <div>
          <InviteForm />
          <SignInSettings />
          <UpstreamSettings />
          <ChangePassword />
        </div>
      </div>
    </>
  );
}

function MemberList() {
  const client = useQueryClient();
  const me = useMe();
  const list = usePaged<Member>(['members'], async (cursor) =>
    pageOf(await call(api.GET('/api/v1/console/members', { params: { query: { cursor } } })), 'members'),
  );
  const remove = useMutation({
    mutationFn: (id: string) => call(api.DELETE('/api/v1/console/members/{id}', { params: { path: { id } } })),
    onSuccess: () => void client.invalidateQueries({ queryKey: ['members'] }),
  });
  return (
    <section aria-labelledby="members-title">
      <h2 id="members-title">Members</h2>
      <ErrorNotice error={remove.error} />
      {list.isPending ? (
        <Loading />
      ) : list.error ? (
        <ErrorNotice error={list.error} />
      ) : (
        <ul className="cards" aria-label="Members">
          {list.items.map((member) => (
            <li key={member.id}>
              <div className="row">
                <strong>{member.email}</strong> {member.id === me.data?.user.id && <span className="badge">you</span>}
              </div>
              <div className="muted">
                joined {when(member.created_at)} · last sign-in {when(member.last_login_at)}
              </div>
              {member.id !== me.data?.user.id && (
                <ConfirmButton
                  label={`Remove ${member.email}`}
                  title={`Remove ${member.email}?`}
                  body={<p>Their sessions end at once and they can no longer sign in to this organization.</p>}
                  confirmLabel="Remove member"
                  onConfirm={() => remove.mutate(member.id)}
                  pending={remove.isPending && remove.variables === member.id}
                />
              )}
            </li>
          ))}
        </ul>
      )}
      <LoadMore hasNext={list.hasNext} pending={list.loadingMore} onClick={list.loadMore} />
    </section>
  );
}

function InviteList() {
  const client = useQueryClient();
  const list = usePaged<Invite>(['invites'], async (cursor) =>
    pageOf(await call(api.GET('/api/v1/console/invites', { params: { query: { cursor } } })), 'invites'),
  );
  const revoke = useMutation({
    mutationFn: (id: string) => call(api.DELETE('/api/v1/console/invites/{id}', { params: { path: { id } } })),
    onSuccess: () => void client.invalidateQueries({ queryKey: ['invites'] }),
  });
  return (
    <section aria-labelledby="invites-title">
      <h2 id="invites-title">Open invitations</h2>
      <ErrorNotice error={revoke.error} />
      {list.isPending ? (
        <Loading />
      ) : list.error ? (
        <ErrorNotice error={list.error} />
      ) : list.items.length === 0 ? (
        <EmptyState title="No open invitations." actions={<StartWith form="invite-title">Invite a person</StartWith>}>
          Invite the people who run your agents with you: each gets a link to join this organization and sees and
          changes everything you do here.
        </EmptyState>
      ) : (
        <ul className="cards" aria-label="Open invitations">
          {list.items.map((invite) => (
            <li key={invite.id}>
              <strong>{invite.email}</strong> <span className="muted">expires {when(invite.expires_at)}</span>
              <ConfirmButton
                label={`Withdraw the invitation of ${invite.email}`}
                title={`Withdraw the invitation of ${invite.email}?`}
                body={<p>The link stops working.</p>}
                confirmLabel="Withdraw invitation"
                onConfirm={() => revoke.mutate(invite.id)}
                pending={revoke.isPending && revoke.variables === invite.id}
              />
            </li>
          ))}
        </ul>
      )}
      <LoadMore hasNext={list.hasNext} pending={list.loadingMore} onClick={list.loadMore} />
    </section>
  );
}

function InviteForm() {
  const client = useQueryClient();
  const [email, setEmail] = useState('');
  const [link, setLink] = useState<string | null>(null);
  const {
    mutation: invite,
    submit,
    errorOf,
    notice,
  } = useFormMutation({
    validate: () => ({
      email: validateEmail(email.trim()),
    }),
    mutationFn: () => call<CreatedInvite>(api.POST('/api/v1/console/invites', { body: { email: email.trim() } })),
    onSuccess: (created) => {
      void client.invalidateQueries({ queryKey: ['invites'] });
      setLink(created.url ?? null);
      setEmail('');
    },
  });
  if (link) {
    return <SecretOnce label="Invitation link" value={link} onDone={() => setLink(null)} />;
  }
  return (
    <section aria-labelledby="invite-title">
      <h2 id="invite-title">Invite a person</h2>
      <form onSubmit={submit} noValidate>
        <Field
          label="Their email"
          type="email"
          value={email}
          onChange={(e) => setEmail(e.target.value)}
          error={errorOf('email')}
        />
        <ErrorNotice error={notice} />
        <Submit pending={invite.isPending} pendingLabel="Inviting…">
          Create invitation link
        </Submit>
      </form>
    </section>
  );
}

const SETTINGS = ['organization-settings'] as const;
const DOMAIN = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$/i;

/** How the organization's people sign in (single sign-on): shown when the service offers it. */
function SignInSettings() {
  const sso = useSsoConfig();
  const settings = useQuery({
    queryKey: SETTINGS,
    queryFn: () => call<OrganizationSettings>(api.GET('/api/v1/organization/settings')),
    enabled: !!sso.data?.enabled,
  });
  if (!sso.data?.enabled) {
    return null;
  }
  return (
    <section aria-labelledby="sign-in-title">
      <h2 id="sign-in-title">Sign-in</h2>
      {settings.isPending ? (
        <Loading />
      ) : settings.error ? (
        <ErrorNotice error={settings.error} />
      ) : (
        <SignInForm settings={settings.data} provider={sso.data.provider_name ?? 'single sign-on'} />
      )}
    </section>
  );
}

function SignInForm({ settings, provider }: { settings: OrganizationSettings; provider: string }) {
  const client = useQueryClient();
  const [password, setPassword] = useState(settings.password_sign_in);
  const [domains, setDomains] = useState(settings.sso_email_domains.join(', '));
  const list = () =>
    domains
      .split(/[\s,]+/)
      .map((d) => d.trim())
      .filter(Boolean);
  const {
    mutation: save,
    submit,
    errorOf,
    notice,
  } = useFormMutation({
    validate: () => ({
      sso_email_domains: list().every((d) => DOMAIN.test(d)) ? undefined : 'Domains such as acme.example, by commas.',
    }),
    mutationFn: () =>
      call<OrganizationSettings>(
        api.PATCH('/api/v1/organization/settings', {
          body: { password_sign_in: password, sso_email_domains: list() },
        }),
      ),
    onSuccess: (saved) => {
      client.setQueryData(SETTINGS, saved);
      setDomains(saved.sso_email_domains.join(', '));
    },
  });
  return (
    <form onSubmit={submit} noValidate>
      <p className="muted">Members can always sign in with {provider}.</p>
      <Check
        label="Members may also sign in with a password"
        checked={password}
        onChange={(e) => setPassword(e.target.checked)}
      />
      <Field
        label="Email domains that join with single sign-on"
        value={domains}
        onChange={(e) => setDomains(e.target.value)}
        hint={`A person whose ${provider} account has a verified address at one of these domains joins at their first sign-in. Only domains your organization controls.`}
        error={errorOf('sso_email_domains')}
      />
      <ErrorNotice error={notice} />
      {save.isSuccess && <SuccessNotice>Sign-in settings saved.</SuccessNotice>}
      <Submit pending={save.isPending} pendingLabel="Saving…">
        Save sign-in settings
      </Submit>
    </form>
  );
}

/** Whether the organization forwards only to upstreams whose card verified (docs/api.md §14, "Verified upstream cards"). */
function UpstreamSettings() {
  const settings = useQuery({
    queryKey: SETTINGS,
    queryFn: () => call<OrganizationSettings>(api.GET('/api/v1/organization/settings')),
  });
  return (
    <section aria-labelledby="upstream-settings-title">
      <h2 id="upstream-settings-title">Upstream agents</h2>
      {settings.isPending ? (
        <Loading />
      ) : settings.error ? (
        <ErrorNotice error={settings.error} />
      ) : (
        <UpstreamSettingsForm settings={settings.data} />
      )}
    </section>
  );
}

function UpstreamSettingsForm({ settings }: { settings: OrganizationSettings }) {
  const client = useQueryClient();
  const [required, setRequired] = useState(settings.require_verified_upstream_cards);
  const {
    mutation: save,
    submit,
    notice,
  } = useFormMutation({
    mutationFn: () =>
      call<OrganizationSettings>(
        api.PATCH('/api/v1/organization/settings', { body: { require_verified_upstream_cards: required } }),
      ),
    onSuccess: (saved) => client.setQueryData(SETTINGS, saved),
  });
  return (
    <form onSubmit={submit} noValidate>
      <p className="muted">
        An identity with an upstream forwards its tasks to another A2A agent. Its card can be checked against public
        keys you pin for it, on the identity's page.
      </p>
      <Check
        label="Forward only to upstreams whose card verified against their pinned keys"
        checked={required}
        onChange={(e) => setRequired(e.target.checked)}
      />
      <ErrorNotice error={notice} />
      {save.isSuccess && <SuccessNotice>Upstream setting saved.</SuccessNotice>}
      <Submit pending={save.isPending} pendingLabel="Saving…">
        Save upstream setting
      </Submit>
    </form>
  );
}

function ChangePassword() {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [repeat, setRepeat] = useState('');
  const {
    mutation: change,
    submit,
    errorOf,
    notice,
  } = useFormMutation({
    validate: () => ({
      current_password: current ? undefined : 'Enter your current password.',
      new_password: next.length < 12 ? 'At least 12 characters.' : undefined,
      repeat: repeat !== next ? 'The two new passwords differ.' : undefined,
    }),
    mutationFn: () =>
      call(api.POST('/api/v1/console/password', { body: { current_password: current, new_password: next } })),
    onSuccess: () => {
      setCurrent('');
      setNext('');
      setRepeat('');
    },
  });
  return (
    <section aria-labelledby="password-title">
      <h2 id="password-title">Change your password</h2>
      <form onSubmit={submit} noValidate>
        <Field
          label="Current password"
          type="password"
          autoComplete="current-password"
          value={current}
          onChange={(e) => setCurrent(e.target.value)}
          error={errorOf('current_password')}
        />
        <Field
          label="New password"
          type="password"
          autoComplete="new-password"
          value={next}
          onChange={(e) => setNext(e.target.value)}
          error={errorOf('new_password')}
        />
        <Field
          label="Repeat the new password"
          type="password"
          autoComplete="new-password"
          value={repeat}
          onChange={(e) => setRepeat(e.target.value)}
          error={errorOf('repeat')}
        />
        <ErrorNotice error={notice} />
        {change.isSuccess && <SuccessNotice>Password changed. Your other sessions have ended.</SuccessNotice>}
        <Submit pending={change.isPending} pendingLabel="Changing…">
          Change password
        </Submit>
      </form>
    </section>
  );
}

/** Read once from the link's fragment (never sent to the server by the browser), then wiped from the address bar. */
let acceptCode: string | null = null;
function takeCode(): string {
  if (acceptCode === null) {
    acceptCode = decodeURIComponent(window.location.hash.replace(/^#/, ''));
    if (acceptCode) {
      window.history.replaceState(null, '', window.location.pathname);
    }
  }
  return acceptCode;
}

export function AcceptPage() {
  usePageTitle('Accept an invitation');
  const client = useQueryClient();
  const [code] = useState(takeCode);
  // Who is invited where, so the person knows what they are joining (and which email they sign in with).
  const invitation = useQuery({
    queryKey: ['invitation', code],
    enabled: !!code,
    queryFn: () => call<Invitation>(api.POST('/api/v1/console/invites/lookup', { body: { code } })),
  });
  const [password, setPassword] = useState('');
  const [repeat, setRepeat] = useState('');
  const {
    mutation: accept,
    submit,
    errorOf,
    notice,
  } = useFormMutation({
    validate: () => ({
      password: password.length < 12 ? 'At least 12 characters.' : undefined,
      repeat: repeat !== password ? 'The two passwords differ.' : undefined,
    }),
    mutationFn: () => call<Me>(api.POST('/api/v1/console/invites/accept', { body: { code, password } })),
    onSuccess: (me) => {
      client.clear();
      client.setQueryData(ME, { user: me.user, organization: me.organization });
      navigate('/identities', { replace: true });
    },
  });
  return (
    <main className="narrow">
      <h1>Accept an invitation</h1>
      {!code ? (
        <p role="alert" className="notice error">
          This page needs the whole invitation link, including the part after “#”. Ask the person who invited you for a
          new link.
        </p>
      ) : invitation.isPending ? (
        <Loading label="Reading the invitation…" />
      ) : invitation.error ? (
        <ErrorNotice error={invitation.error} />
      ) : (
        <form onSubmit={submit} noValidate>
          <p>
            <strong>{invitation.data.organization.name}</strong> invited <strong>{invitation.data.email}</strong>.
            Choose a password to join; you will sign in with this email.
          </p>
          <Field
            label="Password"
            type="password"
            autoComplete="new-password"
            value={password}
            onChange={(e) => setPassword(e.target.value)}
            hint="At least 12 characters."
            error={errorOf('password')}
          />
          <Field
            label="Repeat the password"
            type="password"
            autoComplete="new-password"
            value={repeat}
            onChange={(e) => setRepeat(e.target.value)}
            error={errorOf('repeat')}
          />
          <ErrorNotice error={notice} />
          <Submit pending={accept.isPending} pendingLabel="Joining…">
            Join the organization
          </Submit>
        </form>
      )}
      <SsoLink next="/identities" label={(provider) => `Join with ${provider}, as the invited address`} />
    </main>
  );
}
