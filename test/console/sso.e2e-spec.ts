import { startApp, startAppAtOwnAddress, type TestApp } from '../support/app';
import { bearer, PASSWORD, signup, unique, type ConsoleAccount } from '../support/fixtures';
import { Browser, withOidcProvider, type OidcProvider, type ProviderAccount } from '../support/sso';

/**
 * Single sign-on to the Console (docs/api.md §13) against a real OpenID Connect provider
 * (panva's oidc-provider in a process of its own): the whole code flow over HTTP, as a
 * browser follows it, and each way it must refuse.
 */
jest.setTimeout(120_000);

describe('Console single sign-on (OpenID Connect)', () => {
  let t: TestApp;
  let provider: OidcProvider;
  let acme: ConsoleAccount;
  const domain = `${unique('acme')}.test`;

  beforeAll(async () => {
    ({ provider, service: t } = await withOidcProvider((port, provider) =>
      startAppAtOwnAddress(
        {
          CONSOLE_OIDC_ISSUER: provider.issuer,
          CONSOLE_OIDC_CLIENT_ID: provider.clientId,
          CONSOLE_OIDC_CLIENT_SECRET: provider.clientSecret,
          CONSOLE_OIDC_PROVIDER_NAME: 'Test ID',
        },
        { port },
      ),
    ));
    acme = await signup(t, 'Acme');
  });
  afterAll(async () => {
    await t?.close();
    await provider?.close();
  });

  const person = (email: string, verified = true): ProviderAccount => ({
    sub: unique('sub'),
    email,
    email_verified: verified,
  });

  /**
   * Signs in with the provider in a fresh browser: our start, the provider's pages (its
   * login is automatic), our callback. `tamper` changes the authorization request on its way.
   */
  async function signIn(
    account: ProviderAccount,
    options: { next?: string; tamper?: (authorization: URL) => void } = {},
  ) {
    await provider.setAccount(account);
    const browser = new Browser();
    const query = options.next ? `?next=${encodeURIComponent(options.next)}` : '';
    const start = await browser.get(`${t.baseUrl}/api/v1/console/sso${query}`);
    expect(start.status).toBe(302);
    const authorization = new URL(start.location!);
    options.tamper?.(authorization);
    const callback = await browser.follow(authorization.toString(), (url) => url.startsWith(t.baseUrl));
    const end = await browser.get(callback);
    expect(end.status).toBe(302);
    const location = new URL(end.location!);
    return { browser, callback, location, error: location.searchParams.get('sso_error') };
  }

  const me = (browser: Browser) =>
    t
      .http()
      .get('/api/v1/console/me')
      .set('Cookie', `a2a_session=${browser.cookies.get('a2a_session')}`);

  const audit = async (action: string) =>
    (await t.http().get(`/api/v1/audit-events?action=${action}`).set(bearer(acme)).expect(200)).body
      .audit_events as Array<{
      action: string;
      actor: { id: string };
      target: { id: string; label: string };
    }>;

  it('says whether single sign-on is offered, and with which provider', async () => {
    const { body } = await t.http().get('/api/v1/console/sso/config').expect(200);
    expect(body).toEqual({ enabled: true, provider_name: 'Test ID', start_url: '/api/v1/console/sso' });
  });

  it('sends the browser to the provider with PKCE (S256), state and nonce, bound to an HttpOnly cookie', async () => {
    const res = await t.http().get('/api/v1/console/sso').expect(302);
    const url = new URL(res.headers.location);
    expect(url.origin).toBe(provider.issuer);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      response_type: 'code',
      client_id: provider.clientId,
      redirect_uri: `${t.baseUrl}/api/v1/console/sso/callback`,
      scope: 'openid email',
      code_challenge_method: 'S256',
      state: expect.stringMatching(/^[\w-]{43}$/),
      nonce: expect.stringMatching(/^[\w-]{43}$/),
      code_challenge: expect.stringMatching(/^[\w-]{43}$/),
    });
    expect(res.headers['set-cookie'][0]).toMatch(
      /^a2a_sso=[\w-]{43}; Max-Age=600; Path=\/api\/v1\/console\/sso; Expires=.*; HttpOnly; SameSite=Lax$/,
    );
  });

  it('lets an invited person in by signing in with the invited (verified) address: a member, on the page asked for', async () => {
    const email = `${unique('invitee')}@elsewhere.test`;
    const invite = await t.http().post('/api/v1/console/invites').set(bearer(acme)).send({ email }).expect(201);
    const signedIn = await signIn(person(email.toUpperCase()), { next: '/console/keys' });
    expect(signedIn.location.toString()).toBe(`${t.baseUrl}/console/keys`);
    const { body } = await me(signedIn.browser).expect(200);
    expect(body).toMatchObject({ user: { email }, organization: { id: acme.organizationId } });
    const open = await t.http().get('/api/v1/console/invites').set(bearer(acme)).expect(200);
    expect(open.body.invites.map((i: { id: string }) => i.id)).not.toContain(invite.body.id);
    expect((await audit('invitation.accepted_sso'))[0]).toMatchObject({
      actor: { id: body.user.id },
      target: { id: invite.body.id, label: email },
    });

    // The next time, the same person signs in to their account.
    const again = await signIn(person(email));
    expect(again.location.toString()).toBe(`${t.baseUrl}/console/`);
    expect((await me(again.browser).expect(200)).body.user.id).toBe(body.user.id);
    const signIns = (await audit('console.sso_signed_in')).filter((e) => e.target.id === body.user.id);
    expect(signIns).toHaveLength(2);
  });

  it("refuses someone with no account, invitation or domain; the organization's domain lets them in", async () => {
    const email = `${unique('newcomer')}@${domain}`;
    expect((await signIn(person(email))).error).toBe('sso_no_account');
    // A subdomain is another domain.
    await t
      .http()
      .patch('/api/v1/organization/settings')
      .set(bearer(acme))
      .send({ sso_email_domains: [`x.${domain}`] })
      .expect(200);
    expect((await signIn(person(email))).error).toBe('sso_no_account');

    const settings = await t
      .http()
      .patch('/api/v1/organization/settings')
      .set(bearer(acme))
      .send({ sso_email_domains: [` ${domain.toUpperCase()}. `, domain] })
      .expect(200);
    expect(settings.body).toMatchObject({ password_sign_in: true, sso_email_domains: [domain] });
    const joined = await signIn(person(email));
    expect(joined.error).toBeNull();
    const { body } = await me(joined.browser).expect(200);
    expect(body).toMatchObject({ user: { email }, organization: { id: acme.organizationId } });
    expect((await audit('member.joined_by_domain'))[0]).toMatchObject({ target: { id: body.user.id, label: email } });

    // A domain belongs to one organization.
    const other = await signup(t, 'Other');
    const taken = await t
      .http()
      .patch('/api/v1/organization/settings')
      .set(bearer(other))
      .send({ sso_email_domains: [domain] });
    expect(taken.status).toBe(409);
    expect(taken.body.code).toBe('email_domain_taken');
    const bad = await t
      .http()
      .patch('/api/v1/organization/settings')
      .set(bearer(other))
      .send({ sso_email_domains: ['not a domain'] });
    expect(bad.status).toBe(400);
  });

  it('refuses an email the provider has not verified, and the account it names sees the attempt', async () => {
    const signedIn = await signIn(person(acme.email, false));
    expect(signedIn.error).toBe('sso_email_unverified');
    expect(signedIn.browser.cookies.has('a2a_session')).toBe(false);
    expect((await audit('console.sso_sign_in_failed'))[0]).toMatchObject({ target: { id: acme.userId } });
  });

  it('refuses a callback without its sign-in: another state, no cookie, used twice, another nonce, another PKCE challenge', async () => {
    const account = person(acme.email);
    const wrongState = await signIn(account, { tamper: (url) => url.searchParams.set('state', 'x'.repeat(43)) });
    expect(wrongState.error).toBe('sso_state_invalid');

    // The callback a real sign-in got, replayed: in a browser without the cookie, then in its own.
    const ok = await signIn(account);
    expect(ok.error).toBeNull();
    const stranger = await new Browser().get(ok.callback);
    expect(new URL(stranger.location!).searchParams.get('sso_error')).toBe('sso_state_invalid');
    const replay = await ok.browser.get(ok.callback);
    expect(new URL(replay.location!).searchParams.get('sso_error')).toBe('sso_state_invalid');

    // The provider signs what it was asked: an ID token with another nonce, a code for another challenge.
    const wrongNonce = await signIn(account, { tamper: (url) => url.searchParams.set('nonce', 'n'.repeat(43)) });
    expect(wrongNonce.error).toBe('sso_sign_in_failed');
    const wrongChallenge = await signIn(account, {
      tamper: (url) => url.searchParams.set('code_challenge', 'c'.repeat(43)),
    });
    expect(wrongChallenge.error).toBe('sso_sign_in_failed');
    expect(wrongChallenge.browser.cookies.has('a2a_session')).toBe(false);
  });

  it('lets an organization turn password sign-in off: its members sign in with the provider only', async () => {
    const login = () => t.http().post('/api/v1/console/login').send({ email: acme.email, password: PASSWORD });
    const off = await t
      .http()
      .patch('/api/v1/organization/settings')
      .set(bearer(acme))
      .send({ password_sign_in: false })
      .expect(200);
    expect(off.body.password_sign_in).toBe(false);
    const refused = await login().expect(403);
    expect(refused.body.code).toBe('password_sign_in_disabled');
    // A wrong password says only that.
    await t
      .http()
      .post('/api/v1/console/login')
      .send({ email: acme.email, password: 'not the password at all' })
      .expect(401);
    const failures = await audit('console.sign_in_failed');
    expect(failures.filter((e) => e.target.id === acme.userId).length).toBeGreaterThanOrEqual(2);
    // An invitation cannot be accepted with a password either.
    const invite = await t
      .http()
      .post('/api/v1/console/invites')
      .set(bearer(acme))
      .send({ email: `${unique('p')}@x.test` })
      .expect(201);
    const code = new URL(invite.body.url).hash.slice(1);
    const accept = await t.http().post('/api/v1/console/invites/accept').send({ code, password: PASSWORD }).expect(403);
    expect(accept.body.code).toBe('password_sign_in_disabled');

    expect((await signIn(person(acme.email))).error).toBeNull();
    await t
      .http()
      .patch('/api/v1/organization/settings')
      .set(bearer(acme))
      .send({ password_sign_in: true })
      .expect(200);
    await login().expect(200);
    expect((await audit('organization.settings_updated'))[0].action).toBe('organization.settings_updated');
  });

  it('is off without CONSOLE_OIDC_*: nothing to start, and password sign-in cannot be turned off', async () => {
    const plain = await startApp();
    try {
      expect((await plain.http().get('/api/v1/console/sso/config').expect(200)).body).toEqual({
        enabled: false,
        provider_name: null,
        start_url: null,
      });
      expect((await plain.http().get('/api/v1/console/sso').expect(404)).body.code).toBe('sso_not_configured');
      const account = await signup(plain);
      const res = await plain
        .http()
        .patch('/api/v1/organization/settings')
        .set(bearer(account))
        .send({ password_sign_in: false });
      expect(res.status).toBe(409);
      expect(res.body.code).toBe('sso_not_configured');
    } finally {
      await plain.close();
    }
  });
});
