import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, ApiError, call } from '../api';
import { useFormMutation } from '../form-mutation';
import { Link, navigate, useRoute } from '../router';
import type { Me, SsoConfig } from '../types';
import { ErrorNotice, Field, Submit, usePageTitle, type FieldErrors } from '../ui';

export const ME = ['me'] as const;

/** Whether this tab had a session: only then does a 401 mean the session has ended (not on a first visit). */
let hadSession = false;

export function useMe() {
  return useQuery({
    queryKey: ME,
    queryFn: async () => {
      const me = await call<Me>(api.GET('/api/v1/console/me'));
      hadSession = true;
      return me;
    },
    retry: false,
    staleTime: 60_000,
  });
}

/** Whether the service offers single sign-on, and with which provider (read once per page load). */
export function useSsoConfig() {
  return useQuery({
    queryKey: ['sso-config'],
    queryFn: () => call<SsoConfig>(api.GET('/api/v1/console/sso/config')),
    staleTime: Infinity,
  });
}

/** What a refused single sign-on (`sso_error` on the way back) means for the person. */
const SSO_ERRORS: Record<string, string> = {
  sso_state_invalid: 'That sign-in took too long or was started in another browser. Please try again.',
  sso_sign_in_failed: 'The sign-in with your provider did not succeed. Please try again.',
  sso_email_unverified: 'Your provider has not verified your email address, so it cannot sign you in here.',
  sso_no_account:
    'There is no Console account for your email. Ask an administrator of your organization for an invitation.',
  email_taken: 'An account with your email was created at the same moment. Please sign in again.',
  member_limit: 'Your organization has its maximum of members. Ask an administrator to make room.',
};

/**
 * "Sign in with <provider>": a link, as the sign-in is a navigation to the provider and
 * back. `next` is the Console page to land on.
 */
export function SsoLink({ next, label }: { next: string; label?: (provider: string) => string }) {
  const config = useSsoConfig();
  if (!config.data?.enabled || !config.data.start_url) {
    return null;
  }
  const href = `${config.data.start_url}?next=${encodeURIComponent(`/console${next}`)}`;
  return (
    <p>
      <a className="button" href={href}>
        {(label ?? ((provider) => `Sign in with ${provider}`))(config.data.provider_name ?? 'single sign-on')}
      </a>
    </p>
  );
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** The browser's check of an email field: a message, or undefined for an address. */
export function validateEmail(email: string): string | undefined {
  return EMAIL.test(email) ? undefined : 'Enter an email address such as ada@example.com.';
}

function validateCredentials(email: string, password: string, signup: boolean): FieldErrors {
  const errors: FieldErrors = { email: validateEmail(email) };
  if (signup && password.length < 12) {
    errors.password = 'At least 12 characters.';
  }
  if (!signup && password.length === 0) {
    errors.password = 'Enter your password.';
  }
  return errors;
}

/**
 * Where to go after signing in: the page the person was sent away from, if it is a Console
 * page other than the landing one (opening the Console at all sends there).
 */
function nextPath(search: URLSearchParams, landing: string): string {
  const next = search.get('next');
  return next &&
    !['/', '/overview'].includes(next) &&
    next.startsWith('/') &&
    !next.startsWith('//') &&
    !next.startsWith('/signin')
    ? next
    : landing;
}

/** A person signing in lands on the overview; a new organization on its identities, its first step. */
function useSignedIn(landing: '/overview' | '/identities' = '/overview') {
  const client = useQueryClient();
  const { search } = useRoute();
  return (me: Me) => {
    hadSession = true;
    client.clear();
    client.setQueryData(ME, { user: me.user, organization: me.organization });
    navigate(nextPath(search, landing), { replace: true });
  };
}

export function SignInPage() {
  usePageTitle('Sign in');
  const { search } = useRoute();
  const signedIn = useSignedIn();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const {
    mutation: login,
    submit,
    errorOf,
    notice,
  } = useFormMutation({
    validate: () => validateCredentials(email, password, false),
    mutationFn: () => call<Me>(api.POST('/api/v1/console/login', { body: { email, password } })),
    onSuccess: signedIn,
  });
  return (
    <main className="narrow">
      <h1>Sign in</h1>
      {search.get('expired') && (
        <p role="status" className="notice">
          Your session has ended. Sign in again to continue.
        </p>
      )}
      {search.get('sso_error') && (
        <p role="alert" className="notice error">
          {SSO_ERRORS[search.get('sso_error')!] ?? 'The sign-in with your provider did not succeed.'}{' '}
          <code className="code">{search.get('sso_error')}</code>
        </p>
      )}
      <SsoLink next={nextPath(search, '/overview')} />
      <form onSubmit={submit} noValidate>
        <Field
          label="Email"
          type="email"
          autoComplete="username"
          value={email}
          onChange={(e) => setEmail(e.target.value)}
          error={errorOf('email')}
        />
        <Field
          label="Password"
          type="password"
          autoComplete="current-password"
          value={password}
          onChange={(e) => setPassword(e.target.value)}
          error={errorOf('password')}
        />
        <ErrorNotice error={notice} />
        <Submit pending={login.isPending} pendingLabel="Signing in…">
          Sign in
        </Submit>
      </form>
      <p>
        New here? <Link to={`/signup${search.size ? `?${search}` : ''}`}>Create an organization</Link>
      </p>
    </main>
  );
}

export function SignUpPage() {
  usePageTitle('Create an organization');
  const signedIn = useSignedIn('/identities');
  const [organization, setOrganization] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const {
    mutation: signup,
    submit,
    errorOf,
    notice,
  } = useFormMutation({
    validate: () => ({
      ...validateCredentials(email, password, true),
      organization_name: organization.trim() ? undefined : 'Name your organization.',
    }),
    mutationFn: () =>
      call<Me>(api.POST('/api/v1/console/signup', { body: { organization_name: organization, email, password } })),
    onSuccess: signedIn,
  });
  return (
    <main className="narrow">
      <h1>Create an organization</h1>
      <form onSubmit={submit} noValidate>
        <Field
          label="Organization name"
          value={organization}
          onChange={(e) => setOrganization(e.target.value)}
          error={errorOf('organization_name')}
        />
        <Field
          label="Email"
          type="email"
          autoComplete="username"
          value={email}
          onChange={(e) => setEmail(e.target.value)}
          error={errorOf('email')}
        />
        <Field
          label="Password"
          type="password"
          autoComplete="new-password"
          value={password}
          onChange={(e) => setPassword(e.target.value)}
          hint="At least 12 characters."
          error={errorOf('password')}
        />
        <ErrorNotice error={notice} />
        <Submit pending={signup.isPending} pendingLabel="Creating…">
          Create organization
        </Submit>
      </form>
      <p>
        Already have an account? <Link to="/signin">Sign in</Link>
      </p>
    </main>
  );
}

export function useSignOut() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => call(api.POST('/api/v1/console/logout')),
    onSettled: () => {
      hadSession = false;
      client.clear();
      navigate('/signin', { replace: true });
    },
  });
}

/** Sent here when a request answers 401: back to sign-in, and afterwards to where the person was. */
export function sendToSignIn(error: unknown): void {
  if (!(error instanceof ApiError) || error.status !== 401) {
    return;
  }
  const here = window.location.pathname.replace(/^\/console/, '') || '/';
  if (['/signin', '/signup', '/accept'].includes(here)) {
    return;
  }
  const next = `next=${encodeURIComponent(here + window.location.search)}`;
  navigate(hadSession ? `/signin?expired=1&${next}` : here === '/' ? '/signin' : `/signin?${next}`, { replace: true });
}
