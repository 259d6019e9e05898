/**
 * The Console in a real browser (a Chromium through playwright-core, see
 * test/support/chromium.ts): the built app,
 * served by the real service on its own test database, driven by role and label as a person
 * would. Any JavaScript error on a page fails the run. Screenshots of the main pages are
 * written to docs/screenshots/ when UPDATE_SCREENSHOTS=1 (to a temporary folder otherwise).
 */
import type { BrowserContext, Page } from 'playwright-core';
import type { TestApp } from '../support/app';
import { rpc, v03Message } from '../support/a2a';
import { startConsoleBrowser, WAIT, type ConsoleBrowser } from '../support/console-browser';
import { apiKey } from '../support/fixtures';
import { startReceiver, type Receiver } from '../support/receiver';

const PASSWORD = 'correct horse battery staple';

jest.setTimeout(180_000);

describe('The Console in Chromium', () => {
  let ui: ConsoleBrowser;
  let t: TestApp;
  let receiver: Receiver;
  const founder = { email: `founder-${Date.now()}@example.test`, organization: 'Acme Robotics' };
  let page: Page;
  let context: BrowserContext;
  const keys: Record<string, string> = {};
  const newPage = (ctx: BrowserContext, width?: number) => ui.newPage(ctx, width);
  const shot = (p: Page, name: string) => ui.shot(p, name);
  const url = (path: string) => ui.url(path);

  beforeAll(async () => {
    ui = await startConsoleBrowser({ WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true', EVENTS_POLL_INTERVAL_MS: '100' });
    t = ui.t;
    receiver = await startReceiver();
    context = await ui.browser.newContext();
    page = await newPage(context);
  });

  // JavaScript errors (console.error, uncaught exceptions) of every page, checked after each journey.
  afterEach(() => {
    expect(ui.takeErrors()).toEqual([]);
  });

  afterAll(async () => {
    await receiver?.close();
    await ui?.close();
  });

  it('signs a person up: a new organization, then the identities page', async () => {
    await page.goto(url('/'));
    await page.getByRole('heading', { name: 'Sign in' }).waitFor(WAIT);
    await shot(page, 'sign-in');
    await page.getByRole('link', { name: 'Create an organization' }).click();
    await page.getByLabel('Organization name').fill(founder.organization);
    await page.getByLabel('Email').fill(founder.email);
    await page.getByLabel('Password').fill('short');
    await page.getByRole('button', { name: 'Create organization' }).click();
    // Validated before sending, shown next to the field.
    await page.getByText('At least 12 characters.', { exact: true }).waitFor(WAIT);
    expect(await page.getByLabel('Password').getAttribute('aria-invalid')).toBe('true');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create organization' }).click();
    await page.getByRole('heading', { name: 'Identities', level: 1 }).waitFor(WAIT);
    await page.getByText(founder.organization).waitFor(WAIT);
  });

  it('creates an identity with its first key (shown once) and enables it', async () => {
    await page.getByLabel('Handle').fill('Bad Handle!');
    await page.getByRole('button', { name: 'Create identity' }).click();
    await page.getByText(/3–63 characters/).waitFor(WAIT);
    // The server's field errors (`errors[]` of the problem) are shown next to their field.
    await page.getByLabel('Handle').fill('directory');
    await page.getByRole('button', { name: 'Create identity' }).click();
    await page.getByRole('alert').waitFor(WAIT);
    const handle = page.getByLabel('Handle');
    await page.locator('[aria-invalid="true"]').first().waitFor(WAIT);
    const describedBy = await handle.getAttribute('aria-describedby');
    expect(await page.locator(`[id="${describedBy}"]`).textContent()).toContain('"directory" is reserved');
    await page.getByLabel('Handle').fill('acme-requester');
    await page.getByLabel('Display name').fill('Acme requester');
    await page.getByRole('button', { name: 'Create identity' }).click();
    const secret = page.getByLabel('Its first agent key', { exact: true });
    await secret.waitFor(WAIT);
    keys.requester = await secret.inputValue();
    expect(keys.requester).toMatch(/^a2a_agt_/);
    await page.getByText('This is the only time it is shown', { exact: false }).waitFor(WAIT);
    await page.getByRole('button', { name: 'I have saved it' }).click();
    await page.getByRole('heading', { name: 'Acme requester' }).waitFor(WAIT);
    expect(await page.content()).not.toContain(keys.requester);

    const enabled = page.getByLabel(/^Enabled/);
    expect(await enabled.isChecked()).toBe(false);
    await enabled.check();
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Settings saved.').waitFor(WAIT);
    await t.http().get('/a2a/acme-requester/card').expect(200);

    // The card and its skills.
    await page.getByRole('button', { name: 'Add a skill' }).click();
    await page.getByRole('button', { name: 'Save card' }).click();
    await page.getByText('A skill needs an id.').waitFor(WAIT);
    await page.getByLabel('Skill 1 id').fill('invoice-lookup');
    await page.getByLabel('Skill 1 name').fill('Invoice lookup');
    await page.getByLabel('Skill 1 description').fill('Finds an invoice by its number.');
    await page.getByLabel('Skill 1 tags').fill('billing, invoices');
    expect(await page.getByLabel('Skill 1 visibility').inputValue()).toBe('public');
    // A second skill, for admitted callers only: kept off the public card.
    await page.getByRole('button', { name: 'Add a skill' }).click();
    await page.getByLabel('Skill 2 id').fill('refund-issue');
    await page.getByLabel('Skill 2 name').fill('Refund issue');
    await page.getByLabel('Skill 2 tags').fill('billing');
    await page.getByLabel('Skill 2 visibility').selectOption({ label: 'admitted only' });
    await page.getByRole('button', { name: 'Save card' }).click();
    await page.getByText('Card saved.').waitFor(WAIT);
    const saved = page.getByRole('list', { name: 'Skills on the card' });
    await saved
      .getByRole('listitem')
      .filter({ hasText: 'invoice-lookup' })
      .getByText('public', { exact: true })
      .waitFor(WAIT);
    await saved
      .getByRole('listitem')
      .filter({ hasText: 'refund-issue' })
      .getByText('admitted only', { exact: true })
      .waitFor(WAIT);
    await shot(page, 'identity');
    const card = await t.http().get('/a2a/acme-requester/card').expect(200);
    expect(card.body.skills).toEqual([
      expect.objectContaining({ id: 'invoice-lookup', name: 'Invoice lookup', tags: ['billing', 'invoices'] }),
    ]);
    expect(JSON.stringify(card.body)).not.toContain('refund-issue');
    // The admitted skill was sent through the API, not dropped: the identity keeps it, and a reload shows it.
    await page.reload();
    expect(await page.getByLabel('Skill 2 visibility').inputValue()).toBe('admitted');
    expect(await page.getByLabel('Skill 1 visibility').inputValue()).toBe('public');

    // The worker, without a key: its key is minted on the keys page.
    await page.getByRole('link', { name: '← Identities' }).click();
    await page.getByLabel('Handle').fill('acme-worker');
    await page.getByLabel('Display name').fill('Acme worker');
    await page.getByLabel('Mint its first agent key').uncheck();
    await page.getByRole('button', { name: 'Create identity' }).click();
    await page.getByRole('heading', { name: 'Acme worker' }).waitFor(WAIT);
    await page.getByLabel(/^Enabled/).check();
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Settings saved.').waitFor(WAIT);
    await page.getByRole('link', { name: '← Identities' }).click();
    await page.getByRole('link', { name: 'acme-worker' }).waitFor(WAIT);
    await shot(page, 'identities');
  });

  it('claims an agent that signed itself up, by its code', async () => {
    const signup = await t
      .http()
      .post('/api/v1/agent-signup')
      .send({ agent_handle: 'stray-agent', display_name: 'Stray agent' })
      .expect(201);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Identities' }).click();
    await page.getByLabel('Claim code').fill(signup.body.claim.code);
    await page.getByRole('button', { name: 'Claim', exact: true }).click();
    await page.getByRole('heading', { name: 'Stray agent' }).waitFor(WAIT);
    await page
      .getByText(/claimed/)
      .first()
      .waitFor(WAIT);
    // A used code is refused, with the problem's detail.
    await page.getByRole('link', { name: '← Identities' }).click();
    await page.getByLabel('Claim code').fill(signup.body.claim.code);
    await page.getByRole('button', { name: 'Claim', exact: true }).click();
    await page.getByText('This claim code is unknown, already used or expired.').waitFor(WAIT);
  });

  it('mints a key and shows its plaintext once', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('heading', { name: 'Mint a key' }).waitFor(WAIT);
    await page.getByRole('button', { name: 'Mint key' }).click();
    await page.getByText('Choose the identity the key acts as.').waitFor(WAIT);
    await page.getByLabel('Acts as identity').selectOption({ label: 'acme-worker' });
    await page.getByLabel('Label', { exact: true }).fill('worker bot');
    await page.getByRole('button', { name: 'Mint key' }).click();
    const secret = page.getByLabel('Your new API key', { exact: true });
    await secret.waitFor(WAIT);
    keys.worker = await secret.inputValue();
    expect(keys.worker).toMatch(/^a2a_agt_/);
    await page.getByRole('button', { name: 'Copy' }).waitFor(WAIT);
    await shot(page, 'api-key-once');
    await page.getByRole('button', { name: 'I have saved it' }).click();
    await page.getByText('worker bot', { exact: true }).waitFor(WAIT);
    expect(await page.content()).not.toContain(keys.worker);
    await page.reload();
    await page.getByText('worker bot', { exact: true }).waitFor(WAIT);
    expect(await page.content()).not.toContain(keys.worker);
    await shot(page, 'api-keys');

    // Lists page: more keys than one page (50) → "Load more" fetches the next_cursor page.
    const session = await t
      .http()
      .post('/api/v1/console/login')
      .send({ email: founder.email, password: PASSWORD })
      .expect(200);
    for (let i = 0; i < 50; i++) {
      await t
        .http()
        .post('/api/v1/api-keys')
        .set('Authorization', `Bearer ${session.body.token}`)
        .send({ scope: 'admin', label: `bulk ${i}` })
        .expect(201);
    }
    await page.reload();
    const list = page.getByRole('list', { name: 'API keys' });
    await list.getByText('bulk 49', { exact: true }).waitFor(WAIT);
    expect(await list.locator(':scope > li').count()).toBe(50);
    await page.getByRole('button', { name: 'Load more' }).click();
    await list.getByText('worker bot', { exact: true }).waitFor(WAIT);
    expect(await list.locator(':scope > li').count()).toBeGreaterThan(50);
    await page.getByRole('button', { name: 'Load more' }).waitFor({ state: 'detached', ...WAIT });
  });

  it('reads the audit log: who minted the key', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audit' }).click();
    await page.getByRole('heading', { name: 'Audit log', level: 1 }).waitFor(WAIT);
    await page.getByLabel('Target').fill('worker bot');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    const entries = page.getByRole('list', { name: 'Audit entries' });
    await entries.getByText('api_key.minted', { exact: true }).waitFor(WAIT);
    expect(await entries.locator(':scope > li').count()).toBe(1);
    expect(await page.content()).not.toContain(keys.worker);
  });

  it('writes a contact rule and reads the admission check with its explanation', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Admission' }).click();
    await page.getByLabel('Owner identity').fill('acme-requester');
    await page.getByLabel('Direction').selectOption('outbound');
    await page.getByLabel('Action').selectOption('block');
    await page.getByLabel('Peer handle').fill('acme-worker');
    await page.getByLabel('Note').fill('no calls while we test');
    await page.getByRole('button', { name: 'Create rule' }).click();
    await page.getByText('Rule created.').waitFor(WAIT);
    await page.getByText('no calls while we test', { exact: true }).waitFor(WAIT);

    // A call the rule refuses is recorded in the decisions log.
    const denied = await rpc(t, 'acme-worker', keys.requester, 'message/send', {
      message: v03Message('hello?'),
      configuration: { blocking: false },
    });
    expect(denied.status).toBe(403);
    await page.reload();
    const log = page.getByRole('table', { name: 'Decisions log (denials)' });
    await log.getByRole('cell', { name: 'acme-requester → acme-worker' }).waitFor(WAIT);
    await log.getByRole('cell', { name: 'blocked_by_requester' }).waitFor(WAIT);

    await page.getByLabel('Requester (A)').fill('acme-requester');
    await page.getByLabel('Worker (B)').fill('acme-worker');
    await page.getByRole('button', { name: 'Check admission' }).click();
    const result = page.getByRole('status', { name: 'Admission result' });
    await result.getByText('Denied').waitFor(WAIT);
    await result.getByText('blocked_by_requester').waitFor(WAIT);
    await result.getByText("A block rule of the requester's side forbids the call.").waitFor(WAIT);
    await result.getByText(/block · acme-requester outbound identity acme-worker/).waitFor(WAIT);
    await shot(page, 'admission');

    // Destructive acts confirm first: cancel keeps the rule, confirming deletes it.
    await page.getByRole('button', { name: 'Delete rule' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete this contact rule?' });
    await dialog.waitFor(WAIT);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await page.getByText('no calls while we test', { exact: true }).waitFor(WAIT);
    await page.getByRole('button', { name: 'Delete rule' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete rule' }).click();
    await page.getByText('No contact rules.').waitFor(WAIT);

    await page.getByRole('button', { name: 'Check admission' }).click();
    await result.getByText('Allowed').waitFor(WAIT);
    await result.getByText('same_organization').waitFor(WAIT);
  });

  it('shows a task sent through the protocol, live as the worker replies', async () => {
    const sent = await rpc(t, 'acme-worker', keys.requester, 'message/send', {
      message: v03Message('What is six times seven?'),
      configuration: { blocking: false },
    }).expect(200);
    const taskId: string = sent.body.result.id;

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Tasks' }).click();
    await page.getByRole('link', { name: `Task ${taskId.replace(/-/g, '').slice(-8)}` }).click();
    const state = page.getByRole('status', { name: 'Task state' });
    await state.getByText('submitted').waitFor(WAIT);
    await page.getByText('What is six times seven?').waitFor(WAIT);

    await t
      .http()
      .post(`/api/v1/tasks/${taskId}/reply`)
      .set(apiKey(keys.worker))
      .send({ state: 'working' })
      .expect(200);
    await state.getByText('working').waitFor(WAIT);

    await t
      .http()
      .post(`/api/v1/tasks/${taskId}/reply`)
      .set(apiKey(keys.worker))
      .send({
        state: 'completed',
        message: { parts: [{ kind: 'text', text: 'Forty-two.' }] },
        artifacts: [{ name: 'answer', parts: [{ kind: 'text', text: '42' }] }],
      })
      .expect(200);
    await state.getByText('completed').waitFor(WAIT);
    await page.getByText('Forty-two.').first().waitFor(WAIT);
    await page.getByRole('article', { name: 'Artifact answer' }).getByText('42').waitFor(WAIT);
    const timeline = page.getByRole('list', { name: 'Status timeline' });
    await timeline.getByText('completed').waitFor(WAIT);
    expect(await timeline.getByRole('listitem').count()).toBeGreaterThanOrEqual(3);
    await shot(page, 'task');

    // The list filters.
    await page.getByRole('link', { name: '← Tasks' }).click();
    await page.getByLabel('State').selectOption('failed');
    await page.getByText('No tasks match.').waitFor(WAIT);
    await page.getByLabel('State').selectOption('completed');
    await page.getByLabel('Peer').fill('acme-requester');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByRole('link', { name: `Task ${taskId.replace(/-/g, '').slice(-8)}` }).waitFor(WAIT);
  });

  it('creates a webhook (secret once) and sees a delivery of its test event', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Webhooks' }).click();
    await page.getByLabel('Endpoint URL').fill('not a url');
    await page.getByRole('button', { name: 'Create webhook' }).click();
    await page.getByText(/An https URL/).waitFor(WAIT);
    await page.getByLabel('Endpoint URL').fill(receiver.url);
    await page.getByLabel('Description').fill('our event sink');
    await page.getByRole('button', { name: 'Create webhook' }).click();
    const secret = page.getByLabel("The webhook's signing secret", { exact: true });
    await secret.waitFor(WAIT);
    expect(await secret.inputValue()).toMatch(/^whsec_/);
    await page.getByRole('button', { name: 'I have saved it' }).click();
    await page.getByRole('heading', { name: 'Webhook', level: 1 }).waitFor(WAIT);

    await page.getByRole('button', { name: 'Send a test event' }).click();
    await page.getByText('Test event queued.').waitFor(WAIT);
    await receiver.waitFor((received) => received.some((r) => r.body.includes('"ping"')));
    const deliveries = page.getByRole('list', { name: 'Deliveries' });
    await deliveries.getByText('ping').first().waitFor(WAIT);
    await deliveries.getByText('succeeded').first().waitFor(WAIT);
    await shot(page, 'webhook');

    await page.getByRole('button', { name: 'Disable' }).click();
    await page.getByRole('button', { name: 'Enable' }).waitFor(WAIT);
  });

  it('trusts an issuer for workload tokens, changes its subjects and stops trusting it', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Trusted issuers' }).click();
    await page.getByRole('heading', { name: 'Trusted issuers', level: 1 }).waitFor(WAIT);
    await page.getByText('No trusted issuers yet.').waitFor(WAIT);
    const create = page.getByRole('form', { name: 'Trust an issuer' });
    await create.getByLabel('Issuer').fill('https://ci.example.invalid');
    await create.getByLabel('Audience').fill('https://a2a.example.test');
    await create.getByLabel('Subjects').fill('repo:acme/worker:ref:refs/heads/main no-such-agent');
    await create.getByRole('button', { name: 'Trust issuer' }).click();
    // The service's check, said by its field (in a person's words: "Subjects …", not "subjects …").
    await create
      .getByText(/^Subjects name handles that are not identities of your organization: no-such-agent$/)
      .waitFor(WAIT);
    expect(await create.getByLabel('Subjects').getAttribute('aria-invalid')).toBe('true');
    await create.getByLabel('Subjects').fill('repo:acme/worker:ref:refs/heads/main acme-worker');
    await create.getByRole('button', { name: 'Trust issuer' }).click();
    const subjects = page.getByRole('list', { name: 'Subjects of https://ci.example.invalid' });
    await subjects.getByText('repo:acme/worker:ref:refs/heads/main', { exact: true }).waitFor(WAIT);

    await page.getByRole('button', { name: 'Edit https://ci.example.invalid' }).click();
    const edit = page.getByRole('form', { name: 'Edit https://ci.example.invalid' });
    await edit.getByLabel('Subjects').fill('repo:acme/worker:ref:refs/heads/release acme-worker');
    await edit.getByRole('button', { name: 'Save' }).click();
    await subjects.getByText('repo:acme/worker:ref:refs/heads/release', { exact: true }).waitFor(WAIT);
    expect(await subjects.locator(':scope > li').count()).toBe(1);
    await shot(page, 'trusted-issuers');

    await page.getByRole('button', { name: 'Stop trusting https://ci.example.invalid' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Stop trusting', exact: true }).click();
    await page.getByText('No trusted issuers yet.').waitFor(WAIT);
  });

  it('invites a person by link; they accept in their own browser and become a member', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Members' }).click();
    await page.getByRole('heading', { name: 'Invite a person' }).waitFor(WAIT);
    const invitee = `colleague-${Date.now()}@example.test`;
    await page.getByLabel('Their email').fill(invitee);
    await page.getByRole('button', { name: 'Create invitation link' }).click();
    const link = page.getByLabel('Invitation link', { exact: true });
    await link.waitFor(WAIT);
    const inviteUrl = await link.inputValue();
    expect(inviteUrl).toMatch(new RegExp(`^${t.baseUrl}/console/accept#.+`));
    await shot(page, 'invite');
    await page.getByRole('button', { name: 'I have saved it' }).click();
    await page.getByRole('list', { name: 'Open invitations' }).getByText(invitee, { exact: true }).waitFor(WAIT);

    // The invited person: another browser, no session.
    const theirs = await ui.browser.newContext();
    const other = await newPage(theirs);
    await other.goto(inviteUrl);
    await other.getByRole('heading', { name: 'Accept an invitation' }).waitFor(WAIT);
    // The code is read from the fragment and wiped from the address bar.
    expect(new URL(other.url()).hash).toBe('');
    await other.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await other.getByLabel('Repeat the password').fill('something else entirely');
    await other.getByRole('button', { name: 'Join the organization' }).click();
    await other.getByText('The two passwords differ.').waitFor(WAIT);
    await other.getByLabel('Repeat the password').fill(PASSWORD);
    await other.getByRole('button', { name: 'Join the organization' }).click();
    await other.getByRole('heading', { name: 'Identities', level: 1 }).waitFor(WAIT);
    await other.getByText(founder.organization).waitFor(WAIT);
    await other.getByRole('link', { name: 'acme-worker' }).waitFor(WAIT);
    await theirs.close();

    // The inviter sees the new member, and the invitation is used up.
    await page.reload();
    const members = page.getByRole('list', { name: 'Members' });
    await members.getByText(invitee, { exact: true }).waitFor(WAIT);
    await page.getByText('No open invitations.').waitFor(WAIT);
    await shot(page, 'members');

    // Removing a member asks first.
    await page.getByRole('button', { name: `Remove ${invitee}` }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Remove member' }).click();
    await members.getByText(invitee, { exact: true }).waitFor({ state: 'detached', ...WAIT });
  });

  it('reads well at 390 px', async () => {
    const small = await newPage(context, 390);
    await small.goto(url('/identities'));
    await small.getByRole('link', { name: 'acme-worker' }).waitFor(WAIT);
    const overflow = await small.evaluate<number>(
      'document.documentElement.scrollWidth - document.documentElement.clientWidth',
    );
    expect(overflow).toBeLessThanOrEqual(0);
    await shot(small, 'identities-390');
    await small.close();
  });

  it('sends a person whose session was lost to sign-in, and back to the page afterwards', async () => {
    await context.clearCookies();
    await page.goto(url('/webhooks'));
    await page.getByRole('heading', { name: 'Sign in' }).waitFor(WAIT);
    expect(page.url()).toContain('next=%2Fwebhooks');
    await page.getByLabel('Email').fill(founder.email);
    await page.getByLabel('Password').fill('wrong password, surely');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('The email or password is incorrect.').waitFor(WAIT);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor(WAIT);
    expect(new URL(page.url()).pathname).toBe('/console/webhooks');
  });

  it('changes the password (checked before sending; the server checks the current one)', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Members' }).click();
    await page.getByLabel('Current password').fill('not my password at all');
    await page.getByLabel('New password', { exact: true }).fill('a brand new passphrase');
    await page.getByLabel('Repeat the new password').fill('a different passphrase');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByText('The two new passwords differ.').waitFor(WAIT);
    await page.getByLabel('Repeat the new password').fill('a brand new passphrase');
    await page.getByRole('button', { name: 'Change password' }).click();
    // The server's refusal sits by its field, in words (never `current_password`).
    await page.getByText('Current password is incorrect').waitFor(WAIT);
    await page.getByLabel('Current password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByText('Password changed. Your other sessions have ended.').waitFor(WAIT);
    await t
      .http()
      .post('/api/v1/console/login')
      .send({ email: founder.email, password: 'a brand new passphrase' })
      .expect(200);
  });
});
