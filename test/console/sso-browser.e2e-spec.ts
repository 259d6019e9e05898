/**
 * Single sign-on in a real browser (docs/api.md §13): the sign-in page's "Sign in with …"
 * goes to a real OpenID Connect provider (oidc-provider, test/support/sso.ts) and comes
 * back into the Console, signed in; a refusal comes back to the sign-in page, said in words.
 */
import { startConsoleBrowser, WAIT, type ConsoleBrowser } from '../support/console-browser';
import { bearer, signup, unique } from '../support/fixtures';
import { withOidcProvider, type OidcProvider } from '../support/sso';

jest.setTimeout(180_000);

describe('Console single sign-on in Chromium', () => {
  let ui: ConsoleBrowser;
  let provider: OidcProvider;

  beforeAll(async () => {
    ({ provider, service: ui } = await withOidcProvider((port, provider) =>
      startConsoleBrowser(
        {
          CONSOLE_OIDC_ISSUER: provider.issuer,
          CONSOLE_OIDC_CLIENT_ID: provider.clientId,
          CONSOLE_OIDC_CLIENT_SECRET: provider.clientSecret,
          CONSOLE_OIDC_PROVIDER_NAME: 'Test ID',
        },
        port,
      ),
    ));
  });
  afterEach(() => {
    expect(ui.takeErrors()).toEqual([]);
  });
  afterAll(async () => {
    await ui?.close();
    await provider?.close();
  });

  it('signs an invited person in with the provider and lands in the Console; a stranger is told why not', async () => {
    const founder = await signup(ui.t, 'Initech');
    const email = `${unique('milton')}@initech.test`;
    await ui.t.http().post('/api/v1/console/invites').set(bearer(founder)).send({ email }).expect(201);
    await provider.setAccount({ sub: unique('sub'), email, email_verified: true });

    const context = await ui.browser.newContext();
    const page = await ui.newPage(context);
    await page.goto(ui.url('/signin?next=%2Fmembers'));
    await page.getByRole('link', { name: 'Sign in with Test ID' }).waitFor(WAIT);
    await ui.shot(page, 'sso-sign-in');
    await page.getByRole('link', { name: 'Sign in with Test ID' }).click();
    await page.getByRole('heading', { name: 'Members', level: 1 }).waitFor(WAIT);
    await page.getByText(`Initech · ${email}`).waitFor(WAIT);

    // The organization's sign-in settings, on the Members page.
    await page.getByLabel('Email domains that join with single sign-on').fill('initech.test');
    await page.getByRole('button', { name: 'Save sign-in settings' }).click();
    await page.getByText('Sign-in settings saved.').waitFor(WAIT);
    expect(await page.getByLabel('Members may also sign in with a password').isChecked()).toBe(true);
    await ui.shot(page, 'sso-sign-in-settings');
    await context.close();

    const stranger = await ui.browser.newContext();
    const other = await ui.newPage(stranger);
    await provider.setAccount({ sub: unique('sub'), email: `${unique('bob')}@elsewhere.test`, email_verified: true });
    await other.goto(ui.url('/signin'));
    await other.getByRole('link', { name: 'Sign in with Test ID' }).click();
    await other.getByText('There is no Console account for your email.', { exact: false }).waitFor(WAIT);
    await other.getByRole('heading', { name: 'Sign in' }).waitFor(WAIT);
    await ui.shot(other, 'sso-refused');
    await stranger.close();
  });
});
