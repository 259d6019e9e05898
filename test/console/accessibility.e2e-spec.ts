/**
 * An automated accessibility check of every Console page (docs/console.md): axe-core,
 * injected into the built Console served by the real service, at a laptop's 1280×800
 * and a phone's 390×844, finds no serious or critical violation. Each page is opened with
 * data in it (an identity, a task, a rule, a webhook, an invitation, a trusted issuer), signed in or out.
 */
import type { Page } from 'playwright-core';
import type { TestApp } from '../support/app';
import { rpc, v03Message } from '../support/a2a';
import { startConsoleBrowser, WAIT, type ConsoleBrowser } from '../support/console-browser';
import {
  apiKey,
  bearer,
  createEnabledIdentity,
  createIdentity,
  PASSWORD,
  signup,
  type ConsoleAccount,
} from '../support/fixtures';
import { startReceiver, type Receiver } from '../support/receiver';

jest.setTimeout(300_000);

const AXE = require.resolve('axe-core/axe.min.js');
const WIDTHS: [number, number][] = [
  [1280, 800],
  [390, 844],
];

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** The serious and critical violations axe finds on the page as it is now. */
async function violations(page: Page): Promise<string[]> {
  await page.addScriptTag({ path: AXE });
  const found = await page.evaluate(async () => {
    const scope = globalThis as unknown as {
      axe: { run: (context: unknown, options: object) => Promise<{ violations: AxeViolation[] }> };
      document: unknown;
    };
    return (await scope.axe.run(scope.document, { resultTypes: ['violations'] })).violations;
  });
  return found
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) =>
        `${v.id} (${v.impact}): ${v.help} — ${v.nodes
          .slice(0, 3)
          .map((n) => n.target.join(' '))
          .join('; ')}`,
    );
}

describe('Accessibility of every Console page (axe-core)', () => {
  let ui: ConsoleBrowser;
  let t: TestApp;
  let receiver: Receiver;
  let acme: ConsoleAccount;
  const pages: string[] = [];

  beforeAll(async () => {
    ui = await startConsoleBrowser({ WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true', EVENTS_POLL_INTERVAL_MS: '100' });
    t = ui.t;
    receiver = await startReceiver();
    acme = await signup(t, 'Acme Robotics');
    const requester = await createEnabledIdentity(t, acme, { agent_handle: 'acme-buyer' });
    const worker = await createEnabledIdentity(t, acme, { agent_handle: 'acme-billing' });
    const sent = await rpc(t, worker.handle, requester.key, 'message/send', {
      message: v03Message('What is six times seven?'),
      configuration: { blocking: false },
    }).expect(200);
    const taskId: string = sent.body.result.id;
    await t
      .http()
      .post(`/api/v1/tasks/${taskId}/reply`)
      .set(apiKey(worker.key))
      .send({ state: 'completed', message: { parts: [{ kind: 'text', text: 'Forty-two.' }] } })
      .expect(200);
    await t
      .http()
      .post('/api/v1/contact-rules')
      .set(bearer(acme))
      .send({
        identity: worker.handle,
        direction: 'inbound',
        action: 'block',
        peer: { type: 'identity', handle: requester.handle },
      })
      .expect(201);
    const hook = await t
      .http()
      .post('/api/v1/webhooks')
      .set(bearer(acme))
      .send({ url: new URL('/hook', receiver.url).href, events: ['*'], description: 'Our ledger' })
      .expect(201);
    await t.http().post(`/api/v1/webhooks/${hook.body.id}/test`).set(bearer(acme)).expect(202);
    await t.http().post('/api/v1/console/invites').set(bearer(acme)).send({ email: 'dana@example.test' }).expect(201);
    await t
      .http()
      .post('/api/v1/trusted-issuers')
      .set(bearer(acme))
      .send({
        issuer: 'https://ci.example.invalid',
        audience: 'https://a2a.example.test',
        subjects: { 'repo:acme/buyer:ref:refs/heads/main': requester.handle },
      })
      .expect(201);
    // An upstream (named in full: no card is read) and a disabled identity, whose page previews its card.
    await t
      .http()
      .put(`/api/v1/identities/${worker.handle}/upstream`)
      .set(bearer(acme))
      .send({ url: 'https://upstream.example.invalid/a2a', protocol_version: '1.0', binding: 'JSONRPC' })
      .expect(200);
    const drafts = await createIdentity(t, bearer(acme), { agent_handle: 'acme-drafts' });
    pages.push(
      '/overview',
      '/identities',
      `/identities/${worker.handle}`,
      `/identities/${drafts.agent_handle}`,
      '/keys',
      '/trusted-issuers',
      '/admission',
      '/approvals',
      '/tasks',
      `/tasks/${taskId}`,
      '/usage',
      '/webhooks',
      `/webhooks/${hook.body.id}`,
      '/events',
      '/members',
      '/audit',
    );
  });

  afterAll(async () => {
    await receiver?.close();
    await ui?.close();
  });

  it.each(WIDTHS)('finds no serious or critical violation on any page at %i×%i', async (width, height) => {
    // axe is injected as a script of the page: the Console's CSP (script-src 'self') would refuse it.
    const context = await ui.browser.newContext({ bypassCSP: true });
    const page = await ui.newPage(context, width);
    await page.setViewportSize({ width, height });
    const found: string[] = [];
    const check = async (path: string) => {
      await page.goto(ui.url(path));
      await page.locator('h1').first().waitFor(WAIT);
      await page
        .locator('.loading')
        .first()
        .waitFor({ state: 'detached', ...WAIT });
      found.push(...(await violations(page)).map((v) => `${path}: ${v}`));
    };
    for (const path of ['/signin', '/signup']) {
      await check(path);
    }
    await page.goto(ui.url('/signin'));
    await page.getByLabel('Email').fill(acme.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor(WAIT);
    for (const path of pages) {
      await check(path);
    }
    await context.close();
    expect(found).toEqual([]);
    expect(ui.takeErrors()).toEqual([]);
  });
});
