/**
 * The rough edges a new user hit in the Console (issue 41's defects), each checked in a
 * real Chromium (test/support/console-browser.ts) at a desktop (1280×800) or a phone
 * (390×844) width: one app, one browser, one organization made through the API and
 * signed in through the sign-in page.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, FlattenedSign, generateKeyPair } from 'jose';
import type { BrowserContext, Page } from 'playwright-core';
import { enabledAgent, rpc, v03Message, type Agent } from '../support/a2a';
import { startConsoleBrowser, WAIT, type ConsoleBrowser } from '../support/console-browser';
import { bearer, PASSWORD, signup, unique, type ConsoleAccount } from '../support/fixtures';
import type { TestApp } from '../support/app';
import { freePort } from '../support/server-process';
import { startReceiver } from '../support/receiver';
import { startUpstreamAgent } from '../support/upstream-agent';
import { canonicalForm } from '../support/agent-cards';

type KeyLike = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

/** An ES256 key pair: the private key, and the public JWK pinned for it. */
async function keyPair(kid: string) {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  return { privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256' } };
}

jest.setTimeout(180_000);

describe('The Console without its rough edges', () => {
  let ui: ConsoleBrowser;
  let t: TestApp;
  let acme: ConsoleAccount;
  let requester: Agent;
  let worker: Agent;
  let context: BrowserContext;
  let page: Page;
  const url = (path: string) => ui.url(path);
  const nav = (p: Page, name: string) => p.getByRole('navigation', { name: 'Main' }).getByRole('link', { name });

  /** The text of the element that describes `field` (its error or hint). */
  const descriptionOf = async (p: Page, label: string) => {
    const id = await p.getByLabel(label, { exact: true }).getAttribute('aria-describedby');
    return id ? ((await p.locator(`[id="${id}"]`).textContent()) ?? '') : '';
  };

  beforeAll(async () => {
    ui = await startConsoleBrowser({ WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true', EVENTS_POLL_INTERVAL_MS: '100' });
    t = ui.t;
    acme = await signup(t, 'Acme Rough');
    requester = await enabledAgent(t, acme);
    worker = await enabledAgent(t, acme);
    context = await ui.browser.newContext();
    page = await ui.newPage(context, 1280);
  });

  afterEach(() => {
    expect(ui.takeErrors()).toEqual([]);
  });

  afterAll(async () => {
    await ui?.close();
  });

  it('a first visit asks to sign in without saying a session ended; errors sit by their field, in words', async () => {
    await page.goto(url('/'));
    await page.getByRole('heading', { name: 'Sign in' }).waitFor(WAIT);
    expect(await page.title()).toBe('Sign in · A2A Console');
    expect(await page.getByText('Your session has ended').count()).toBe(0);

    // A wrong password: said next to the password field, with no raw code on the page.
    await page.getByLabel('Email').fill(acme.email);
    await page.getByLabel('Password').fill('not the password at all');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('The email or password is incorrect.').waitFor(WAIT);
    expect(await descriptionOf(page, 'Password')).toBe('The email or password is incorrect.');
    expect(await page.content()).not.toContain('invalid_credentials');

    // A taken email on signup: by the email field.
    await page.getByRole('link', { name: 'Create an organization' }).click();
    await page.getByLabel('Organization name').fill('Acme again');
    await page.getByLabel('Email').fill(acme.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create organization' }).click();
    await page.getByText('This email already has an account.').waitFor(WAIT);
    expect(await descriptionOf(page, 'Email')).toBe('This email already has an account.');
    expect(await page.content()).not.toContain('email_taken');

    await page.getByRole('link', { name: 'Sign in' }).click();
    await page.getByLabel('Email').fill(acme.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor(WAIT);
    expect(await page.title()).toBe('Overview · A2A Console');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Identities' }).click();
    await page.getByRole('heading', { name: 'Identities', level: 1 }).waitFor(WAIT);
    expect(await page.title()).toBe('Identities · A2A Console');

    // A taken handle: by the handle field.
    await page.getByLabel('Handle').fill(requester.handle);
    await page.getByRole('button', { name: 'Create identity' }).click();
    await page.getByText(/This handle is taken/).waitFor(WAIT);
    expect(await descriptionOf(page, 'Handle')).toMatch(/^This handle is taken/);
    expect(await page.content()).not.toContain('handle_taken');

    // The wrong current password: "Current password", never `current_password`.
    await nav(page, 'Members').click();
    await page.getByLabel('Current password').fill('not my password at all');
    await page.getByLabel('New password', { exact: true }).fill('a brand new passphrase');
    await page.getByLabel('Repeat the new password').fill('a brand new passphrase');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByText('Current password is incorrect').waitFor(WAIT);
    expect(await page.content()).not.toMatch(/current_password|wrong_password/);

    // A contact rule for a peer that does not exist: by the peer field.
    await nav(page, 'Admission').click();
    await page.getByLabel('Owner identity').fill(requester.handle);
    await page.getByLabel('Peer handle').fill('nobody-here');
    await page.getByRole('button', { name: 'Create rule' }).click();
    await page.getByText('No identity or organization by that name.').waitFor(WAIT);
    expect(await descriptionOf(page, 'Peer handle')).toBe('No identity or organization by that name.');
    expect(await page.content()).not.toContain('peer_not_found');
  });

  it('opened at another origin than PUBLIC_BASE_URL, the Console moves to the public one before sign-in', async () => {
    const other = await ui.newPage(context, 1280);
    await other.goto(url('/keys').replace('127.0.0.1', 'localhost'));
    await other.getByRole('heading', { level: 1 }).waitFor(WAIT);
    expect(new URL(other.url()).origin).toBe(t.baseUrl);
    await other.close();
  });

  it('on a phone, a page with destructive buttons keeps focus and scroll where it starts', async () => {
    const phone = await ui.newPage(context, 390);
    await phone.goto(url(`/identities/${requester.handle}`));
    await phone.getByRole('button', { name: 'Delete identity' }).waitFor(WAIT);
    await phone.getByRole('button', { name: 'Save settings' }).waitFor(WAIT);
    expect(await phone.evaluate('document.activeElement?.tagName')).toMatch(/^(BODY|MAIN)$/);
    expect(await phone.evaluate('window.scrollY')).toBe(0);
    // After the dialog is canceled, focus returns to the button that opened it.
    await phone.getByRole('button', { name: 'Delete identity' }).click();
    await phone.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    expect(await phone.evaluate('document.activeElement?.textContent')).toBe('Delete identity');
    await phone.close();
  });

  it('tells tasks apart: the end of each id and a preview of its message', async () => {
    const ids: string[] = [];
    for (const text of ['Translate the invoice', 'Summarize the contract', 'Count the pallets']) {
      const sent = await rpc(t, worker.handle, requester.key, 'message/send', {
        message: v03Message(text),
        configuration: { blocking: false },
      }).expect(200);
      ids.push(sent.body.result.id);
    }
    await nav(page, 'Tasks').click();
    for (const [i, text] of ['Translate the invoice', 'Summarize the contract', 'Count the pallets'].entries()) {
      const link = page.getByRole('link', { name: `Task ${ids[i].replace(/-/g, '').slice(-8)}` });
      await link.waitFor(WAIT);
      expect(await link.textContent()).toBe(ids[i].replace(/-/g, '').slice(-8));
      await page.getByRole('row').filter({ has: link }).getByText(text).waitFor(WAIT);
    }
    const shown = await page.getByRole('link', { name: /^Task / }).allTextContents();
    expect(new Set(shown).size).toBe(shown.length);
  });

  it('keeps filters in the URL: back and forward step through them, a navigation link clears them', async () => {
    await nav(page, 'Identities').click();
    await page.getByRole('link', { name: requester.handle }).click();
    await page.getByRole('link', { name: 'Its API keys' }).click();
    await page.waitForURL(/\/console\/keys\?identity=/, WAIT);
    // The filter's options are the identities, read after the page opens.
    await page
      .locator(`option[value="${requester.id}"]`)
      .first()
      .waitFor({ state: 'attached', ...WAIT });
    expect(await page.getByLabel('Identity', { exact: true }).inputValue()).toBe(requester.id);
    await page.getByLabel('Status').selectOption('revoked');
    await page.waitForURL(/status=revoked/, WAIT);
    await page.goBack();
    await page.waitForURL((u) => !u.search.includes('status='), WAIT);
    expect(await page.getByLabel('Status').inputValue()).toBe('active');
    expect(await page.getByLabel('Identity', { exact: true }).inputValue()).toBe(requester.id);

    // A key minted elsewhere meanwhile; "API keys" in the navigation shows every key again.
    const label = unique('fresh');
    await t.http().post('/api/v1/api-keys').set(bearer(acme)).send({ scope: 'admin', label }).expect(201);
    await nav(page, 'API keys').click();
    await page.waitForURL((u) => u.pathname === '/console/keys' && u.search === '', WAIT);
    expect(await page.getByLabel('Identity', { exact: true }).inputValue()).toBe('');
    await page.getByRole('list', { name: 'API keys' }).getByText(label, { exact: true }).waitFor(WAIT);

    // A bookmarked filter opens as it was.
    await page.goto(url(`/tasks?identity=${worker.handle}&state=failed`));
    await page.getByText('No tasks match.').waitFor(WAIT);
    expect(await page.getByLabel('State').inputValue()).toBe('failed');
    expect(await page.getByLabel('Identity', { exact: true }).inputValue()).toBe(worker.handle);
  });

  it('shows a deleted identity as deleted and read-only; an unknown one with a heading and a way back', async () => {
    const gone = await enabledAgent(t, acme);
    await t.http().delete(`/api/v1/identities/${gone.handle}`).set(bearer(acme)).expect(204);
    await page.goto(url('/identities'));
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: gone.handle }) });
    await row.getByText('deleted', { exact: true }).waitFor(WAIT);
    expect(await row.getByText('disabled').count()).toBe(0);
    await row.getByRole('link', { name: gone.handle }).click();
    await page.getByText('This identity was deleted').waitFor(WAIT);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toContain('deleted');
    expect(await page.getByRole('button', { name: /Save|Delete identity/ }).count()).toBe(0);
    expect(await page.getByRole('textbox').count()).toBe(0);

    await page.goto(url('/identities/no-such-agent'));
    await page.getByRole('heading', { name: 'No such identity', level: 1 }).waitFor(WAIT);
    await page.getByRole('main').getByRole('link', { name: 'go back to your identities' }).click();
    await page.getByRole('heading', { name: 'Identities', level: 1 }).waitFor(WAIT);
  });

  it('names the actor of each audit entry by email or key label, and filters by them', async () => {
    const label = unique('deploy-bot');
    await t.http().post('/api/v1/api-keys').set(bearer(acme)).send({ scope: 'admin', label }).expect(201);
    await nav(page, 'Audit').click();
    const entries = page.getByRole('list', { name: 'Audit entries' });
    await entries.getByText(`by ${acme.email}`).first().waitFor(WAIT);
    expect(await page.content()).not.toContain(`by user ${acme.userId}`);
    await page.getByLabel('Actor').fill(acme.email);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/actor=/, WAIT);
    await entries.getByText('api_key.minted').first().waitFor(WAIT);
    const bylines = await entries.locator(':scope > li .muted').allTextContents();
    expect(bylines.length).toBeGreaterThan(0);
    expect(bylines.every((line) => line.includes(`by ${acme.email}`))).toBe(true);
  });

  it('webhooks: the secret told truly; description, edit, "retry now" while pending, a failing badge', async () => {
    await nav(page, 'Webhooks').click();
    // An endpoint that answers 503 to everything: every attempt fails.
    const receiver = await startReceiver(() => 503);
    await page.getByLabel('Endpoint URL').fill(receiver.url);
    await page.getByLabel('Description').fill('Billing events for the ledger');
    await page.getByRole('button', { name: 'Create webhook' }).click();
    await page.getByLabel("The webhook's signing secret", { exact: true }).waitFor(WAIT);
    const warning = (await page.locator('.secret .warning').textContent()) ?? '';
    expect(warning).toContain('stored as issued');
    expect(warning).not.toContain('hash');
    await page.getByRole('button', { name: 'I have saved it' }).click();
    await page.getByRole('heading', { name: 'Webhook', level: 1 }).waitFor(WAIT);
    await page.getByText('Billing events for the ledger').waitFor(WAIT);

    await page.getByRole('button', { name: 'Send a test event' }).click();
    const deliveries = page.getByRole('list', { name: 'Deliveries' });
    const ping = deliveries.getByRole('listitem').filter({ hasText: 'ping' }).first();
    await ping.getByText('pending', { exact: true }).waitFor(WAIT);
    await ping.getByText(/1 attempt/).waitFor(WAIT);
    // Pending, its next attempt scheduled: retrying now is offered anyway.
    expect(await ping.getByText('pending', { exact: true }).count()).toBe(1);
    await ping.getByRole('button', { name: 'Retry now' }).click();
    await ping.getByText(/2 attempts/).waitFor(WAIT);
    await page.locator('h1 + p').getByText('failing', { exact: true }).waitFor(WAIT);
    // The request it sent and what the endpoint answered.
    await ping.getByText('Request and responses').click();
    await ping
      .getByLabel('Request body of ping')
      .getByText(/"type": "ping"/)
      .waitFor(WAIT);
    const answered = (await ping.getByLabel('Response to attempt 1').textContent()) ?? '';
    expect(answered).toContain('content-type: text/plain');
    expect(answered).toMatch(/\nok$/);
    await receiver.close();

    await page.getByRole('button', { name: 'Edit webhook' }).click();
    await page.getByLabel('Endpoint URL').fill('http://127.0.0.1:9/hooks/other');
    await page.getByLabel('Description').fill('Only pings now');
    await page.getByLabel('Every event').uncheck();
    // Every event the API takes can be chosen, the newer ones too.
    for (const name of ['api_key.expiring', 'approval.requested', 'approval.decided', 'usage.threshold']) {
      expect(await page.getByLabel(name, { exact: true }).count()).toBe(1);
    }
    await page.getByLabel('ping', { exact: true }).check();
    await page.getByRole('button', { name: 'Save webhook' }).click();
    await page.getByText('Webhook saved.').waitFor(WAIT);
    // A success is a styled notice, announced politely.
    expect(await page.getByText('Webhook saved.').getAttribute('class')).toBe('notice ok');
    expect(await page.getByText('Webhook saved.').getAttribute('role')).toBe('status');
    await page.getByText('http://127.0.0.1:9/hooks/other').waitFor(WAIT);
    await page.getByText('Only pings now').waitFor(WAIT);
    await page.getByText(/events: ping( ·|$)/).waitFor(WAIT);
    await nav(page, 'Webhooks').click();
    await page.getByText('Only pings now').waitFor(WAIT);
  });

  it("explains a denial by the other organization: never our allow rule as deciding, and our own side's part", async () => {
    const beta = await signup(t, 'Beta Rough');
    const theirs = await enabledAgent(t, beta);
    const check = async (requesterHandle: string) => {
      await nav(page, 'Admission').click();
      await page.getByLabel('Requester (A)').fill(requesterHandle);
      await page.getByLabel('Worker (B)').fill(theirs.handle);
      await page.getByRole('button', { name: 'Check admission' }).click();
      const result = page.getByRole('status', { name: 'Admission result' });
      await result.getByText('denied_by_peer').waitFor(WAIT);
      return result;
    };
    // Ours permits (an allow rule), theirs refuses (whitelist): our allow rule did not decide.
    await t
      .http()
      .post('/api/v1/contact-rules')
      .set(bearer(acme))
      .send({
        identity: requester.handle,
        direction: 'outbound',
        action: 'allow',
        peer: { type: 'identity', handle: theirs.handle },
      })
      .expect(201);
    let result = await check(requester.handle);
    expect(await result.getByText(/decided/).count()).toBe(0);
    await result.getByText(`Your side (requester ${requester.handle}) permits it with an allow rule.`).waitFor(WAIT);
    // Theirs blocks; ours has no rule in whitelist mode: it refuses too, and says so.
    await t
      .http()
      .post('/api/v1/contact-rules')
      .set(bearer(beta))
      .send({
        identity: theirs.handle,
        direction: 'inbound',
        action: 'block',
        peer: { type: 'identity', handle: worker.handle },
      })
      .expect(201);
    result = await check(worker.handle);
    await result.getByText(`Your side (requester ${worker.handle}) refuses it too`, { exact: false }).waitFor(WAIT);
  });

  it('on a phone: a one-line header with a menu, table words whole; contrast of focus, borders and the green badge', async () => {
    const phone = await ui.newPage(context, 390);
    await phone.goto(url('/identities'));
    const row = phone.getByRole('row').filter({ has: phone.getByRole('link', { name: requester.handle }) });
    const badge = row.getByText('enabled', { exact: true });
    await badge.waitFor(WAIT);
    const header = await phone.locator('header').boundingBox();
    expect(header!.height).toBeLessThanOrEqual(64);
    // Each word of a cell on one line: the badge's box is one line high.
    const lines = await badge.evaluate((el) => el.getClientRects().length);
    expect(lines).toBe(1);
    await phone.getByRole('button', { name: 'Menu' }).click();
    await nav(phone, 'API keys').click();
    await phone.getByRole('heading', { name: 'API keys', level: 1 }).waitFor(WAIT);
    expect(await phone.getByRole('navigation', { name: 'Main' }).isVisible()).toBe(false);

    // WCAG contrast: non-text (focus ring, input border) ≥ 3:1 on white; the 12 px green badge ≥ 4.5:1.
    const ratio = `(fg, bg) => {
      const lum = (c) => { const [r, g, b] = c.match(/\\d+/g).slice(0, 3).map((v) => { const s = v / 255; return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4; }); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
      const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
      return (a + 0.05) / (b + 0.05);
    }`;
    const input = phone.getByLabel('Label', { exact: true });
    await input.focus();
    const style = (el: unknown, names: string[]): string[] =>
      names.map((name) => (globalThis as any).getComputedStyle(el)[name]);
    const [border, outline] = await input.evaluate(style, ['borderTopColor', 'outlineColor']);
    const white = 'rgb(255, 255, 255)';
    expect(
      await phone.evaluate(`(${ratio})(${JSON.stringify(border)}, ${JSON.stringify(white)})`),
    ).toBeGreaterThanOrEqual(3);
    expect(
      await phone.evaluate(`(${ratio})(${JSON.stringify(outline)}, ${JSON.stringify(white)})`),
    ).toBeGreaterThanOrEqual(3);
    const active = phone.locator('.badge.active').first();
    await active.waitFor(WAIT);
    const [fg, bg] = await active.evaluate(style, ['color', 'backgroundColor']);
    expect(await phone.evaluate(`(${ratio})(${JSON.stringify(fg)}, ${JSON.stringify(bg)})`)).toBeGreaterThanOrEqual(
      4.5,
    );
    await phone.close();
  });

  it('an identity page shows the card it serves in both generations, signed; its recent work; its upstream', async () => {
    await page.goto(url(`/identities/${requester.handle}`));
    const served = page.getByRole('region', { name: 'The card it serves' });
    await served.getByRole('button', { name: 'A2A 1.0' }).click();
    await served
      .getByLabel('Card, A2A 1.0')
      .getByText(/"supportedInterfaces"/)
      .waitFor(WAIT);
    await served.getByRole('button', { name: 'A2A 0.3' }).click();
    await served
      .getByLabel('Card, A2A 0.3')
      .getByText(/"protocolVersion"/)
      .waitFor(WAIT);
    await served.getByRole('status', { name: 'Signature' }).getByText('listed in the service’s JWKS').waitFor(WAIT);
    const recent = page.getByRole('region', { name: 'Recent tasks and keys' });
    await recent.getByRole('list', { name: 'Recent tasks' }).getByRole('listitem').first().waitFor(WAIT);
    await recent.getByRole('list', { name: 'Its keys' }).getByRole('listitem').first().waitFor(WAIT);

    // The upstream: set (its card is read), import its card, remove.
    const agent = await startUpstreamAgent(await freePort());
    try {
      const upstream = page.getByRole('region', { name: 'Upstream agent' });
      await upstream.getByLabel('Upstream endpoint URL').fill(agent.url);
      await upstream.getByRole('button', { name: 'Save upstream' }).click();
      await upstream.getByText('Upstream saved').waitFor(WAIT);
      await upstream.getByText(agent.url, { exact: true }).waitFor(WAIT);
      await upstream.getByRole('button', { name: 'Import its card' }).click();
      await upstream.getByText('copied from the upstream').waitFor(WAIT);
      await upstream.getByRole('button', { name: 'Remove upstream' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Remove upstream' }).click();
      await upstream.getByText(/^None: tasks sent/).waitFor(WAIT);
    } finally {
      await agent.close();
    }

    // Disabled: no card is served, and the page says so instead of linking to a 404; it shows the card
    // enabling it would publish, in both generations, marked as a preview.
    const quiet = await enabledAgent(t, acme, { enabled: false });
    await page.goto(url(`/identities/${quiet.handle}`));
    await page.getByText('No card is served while the identity is disabled').waitFor(WAIT);
    expect(await page.locator(`a[href$="/a2a/${quiet.handle}/card"]`).count()).toBe(0);
    const previewed = page.getByRole('region', { name: 'The card it serves' });
    await previewed
      .getByLabel('Card preview, A2A 1.0')
      .getByText(/"supportedInterfaces"/)
      .waitFor(WAIT);
    await previewed.getByRole('button', { name: 'A2A 0.3' }).click();
    await previewed
      .getByLabel('Card preview, A2A 0.3')
      .getByText(/"protocolVersion"/)
      .waitFor(WAIT);
    await previewed
      .getByRole('status', { name: 'Signature' })
      .getByText(/Not served, so not signed/)
      .waitFor(WAIT);
    expect(await previewed.getByLabel('Card preview, A2A 0.3').textContent()).toContain(quiet.handle);
  });

  it("an upstream is tested before and after saving; its card's verification shows, and the organization's setting", async () => {
    const pinned = await keyPair('browser-2026');
    const other = await keyPair('browser-2026');
    let served: object = {};
    const cards = createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(served)),
    );
    await new Promise<void>((resolve) => cards.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(cards.address() as AddressInfo).port}`;
    const card = {
      name: 'Signed upstream',
      description: 'Signs its card.',
      version: '1',
      supportedInterfaces: [{ url: `${base}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
      capabilities: {},
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain'],
      skills: [
        { id: 'one', name: 'One', description: 'First.', tags: ['t'] },
        { id: 'two', name: 'Two', description: 'Second.', tags: ['t'] },
      ],
    };
    const signedBy = async (key: KeyLike) => {
      const jws = await new FlattenedSign(Buffer.from(canonicalForm(card)))
        .setProtectedHeader({ alg: 'ES256', typ: 'JOSE', kid: 'browser-2026' })
        .sign(key);
      return { ...card, signatures: [{ protected: jws.protected, signature: jws.signature }] };
    };
    try {
      const bridged = await enabledAgent(t, acme);
      await page.goto(url(`/identities/${bridged.handle}`));
      const upstream = page.getByRole('region', { name: 'Upstream agent' });
      const form = upstream.getByRole('form', { name: 'Set the upstream' });

      // An address where nothing answers: the test says why, in words, and that saving would be refused.
      await form.getByLabel('Upstream endpoint URL').fill(`http://127.0.0.1:${await freePort()}/a2a`);
      await form.getByRole('button', { name: 'Test upstream' }).click();
      const failedTest = form.getByRole('region', { name: 'Test result' });
      await failedTest.getByText('Its card could not be read: the connection was refused.').waitFor(WAIT);
      await failedTest.getByText('would be refused: The upstream agent’s card could not be read.').waitFor(WAIT);
      expect(await page.content()).not.toContain('upstream_card_unreachable');

      // Before saving: its card, verified against the key pinned in the form; nothing saved.
      served = await signedBy(pinned.privateKey);
      await form.getByLabel('Upstream endpoint URL').fill(`${base}/a2a`);
      await form.getByLabel('Its card URL (optional)').fill(`${base}/card`);
      await form.getByLabel('Pinned public keys (optional)').fill(JSON.stringify({ keys: [pinned.jwk] }));
      await form.getByRole('button', { name: 'Test upstream' }).click();
      const result = form.getByRole('region', { name: 'Test result' });
      await result.getByText(`Its card was read at ${base}/card.`).waitFor(WAIT);
      await result.getByText('Signed upstream · 2 skills').waitFor(WAIT);
      await result.getByText('verified', { exact: true }).waitFor(WAIT);
      await result.getByText('browser-2026', { exact: true }).waitFor(WAIT);
      await upstream.getByText(/^None: tasks sent/).waitFor(WAIT);

      // Saved: the verification shows with its key id.
      await form.getByRole('button', { name: 'Save upstream' }).click();
      await upstream.getByText('Upstream saved').waitFor(WAIT);
      const its = upstream.locator('dl[aria-label="Its upstream"]');
      await its
        .getByRole('definition')
        .filter({ hasText: 'by key browser-2026' })
        .getByText('verified', { exact: true })
        .waitFor(WAIT);
      await upstream.getByText('1 key (browser-2026)').waitFor(WAIT);

      // Signed by another key now: the saved upstream's test fails with the reason, and so does its record once read again.
      served = await signedBy(other.privateKey);
      await upstream.getByRole('button', { name: 'Test it' }).click();
      const again = upstream.getByRole('region', { name: 'Test result' }).first();
      await again.getByText('this is the saved upstream', { exact: false }).waitFor(WAIT);
      await again.getByText('no signature verifies with a pinned key').waitFor(WAIT);
      await upstream.getByRole('button', { name: 'Import its card' }).click();
      await upstream.getByText('copied from the upstream').waitFor(WAIT);
      await its
        .getByRole('definition')
        .filter({ hasText: 'no signature verifies with a pinned key' })
        .getByText('failed', { exact: true })
        .waitFor(WAIT);

      // The organization's setting, on the Members page; the identity's page then says its tasks are not forwarded.
      await nav(page, 'Members').click();
      const setting = page.getByRole('region', { name: 'Upstream agents' });
      await setting.getByLabel('Forward only to upstreams whose card verified against their pinned keys').check();
      await setting.getByRole('button', { name: 'Save upstream setting' }).click();
      await setting.getByText('Upstream setting saved.').waitFor(WAIT);
      const saved = await t.http().get('/api/v1/organization/settings').set(bearer(acme)).expect(200);
      expect(saved.body.require_verified_upstream_cards).toBe(true);
      await page.goto(url(`/identities/${bridged.handle}`));
      await page.getByText(/tasks sent to \S+ fail until its card verifies/).waitFor(WAIT);
    } finally {
      await t
        .http()
        .patch('/api/v1/organization/settings')
        .set(bearer(acme))
        .send({ require_verified_upstream_cards: false });
      await new Promise((resolve) => cards.close(resolve));
    }
  });

  it('the accept-invitation page names the organization and the email invited', async () => {
    const invited = `${unique('dana')}@example.test`;
    const created = await t
      .http()
      .post('/api/v1/console/invites')
      .set(bearer(acme))
      .send({ email: invited })
      .expect(201);
    const stranger = await ui.browser.newContext();
    try {
      const p = await ui.newPage(stranger, 390);
      await p.goto(created.body.url);
      await p.getByRole('heading', { name: 'Accept an invitation' }).waitFor(WAIT);
      await p.getByText(`Acme Rough invited ${invited}`).waitFor(WAIT);
      expect(await p.title()).toBe('Accept an invitation · A2A Console');
    } finally {
      await stranger.close();
    }
  });
});
