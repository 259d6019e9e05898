/**
 * Usage and delegation trees in the Console (docs/api.md §18), in a real browser: a
 * person of Acme opens a task that Acme's worker delegated to Globex, sees the tree —
 * Globex's own sub-delegation opaque — with the tree's totals, then the usage table by
 * identity and its CSV link.
 */
import type { BrowserContext, Page } from 'playwright-core';
import type { TestApp } from '../support/app';
import { reply, rpc, submitTask, v03Message, type Agent } from '../support/a2a';
import { startConsoleBrowser, WAIT, type ConsoleBrowser } from '../support/console-browser';
import { createEnabledIdentity, PASSWORD, signup, type ConsoleAccount } from '../support/fixtures';

jest.setTimeout(180_000);

describe('Usage and delegation trees in the Console', () => {
  let ui: ConsoleBrowser;
  let t: TestApp;
  let context: BrowserContext;
  let page: Page;
  let acme: ConsoleAccount;
  let root: { id: string };

  beforeAll(async () => {
    ui = await startConsoleBrowser();
    t = ui.t;
    acme = await signup(t, 'Acme Robotics');
    const globex = await signup(t, 'Globex');
    const open = { filter_mode: 'blacklist' };
    const buyer: Agent = await createEnabledIdentity(t, acme, { agent_handle: 'acme-buyer', ...open });
    const planner: Agent = await createEnabledIdentity(t, acme, { agent_handle: 'acme-planner', ...open });
    const billing: Agent = await createEnabledIdentity(t, globex, { agent_handle: 'globex-billing', ...open });
    const printer: Agent = await createEnabledIdentity(t, globex, { agent_handle: 'globex-printer', ...open });
    root = await submitTask(t, buyer, planner);
    const delegate = async (from: Agent, to: Agent, parent: string) =>
      (
        await rpc(t, to.handle, from.key, 'message/send', {
          message: v03Message('part of it', { referenceTaskIds: [parent] }),
          configuration: { blocking: false },
        }).expect(200)
      ).body.result.id as string;
    const child = await delegate(planner, billing, root.id);
    const grandchild = await delegate(billing, printer, child);
    await reply(t, grandchild, printer.key, {
      state: 'completed',
      usage: { input_tokens: 900, output_tokens: 100, cost: { amount: '0.02', currency: 'USD' } },
    }).expect(200);
    await reply(t, child, billing.key, {
      state: 'completed',
      usage: { input_tokens: 400, output_tokens: 100, cost: { amount: '0.01', currency: 'USD' } },
    }).expect(200);
    context = await ui.browser.newContext();
    page = await ui.newPage(context);
  });

  afterEach(() => {
    expect(ui.takeErrors()).toEqual([]);
  });

  afterAll(async () => {
    await ui?.close();
  });

  it('shows the tree from a task: its own tasks by name, another organization’s opaque, and the totals', async () => {
    await page.goto(ui.url(`/tasks/${root.id}`));
    await page.getByLabel('Email').fill(acme.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const tree = page.getByRole('list', { name: 'Delegation tree' });
    await tree.waitFor(WAIT);
    await tree.getByText('acme-buyer → acme-planner (this task)').waitFor(WAIT);
    await tree.getByRole('link', { name: 'acme-planner → globex-billing' }).waitFor(WAIT);
    await tree.getByText("Another organization's task").waitFor(WAIT);
    expect(await tree.textContent()).not.toContain('globex-printer');
    await page.getByLabel('Tree totals').getByText('3 tasks in the tree · 1500 tokens · cost 0.03 USD').waitFor(WAIT);
    await ui.shot(page, 'console-task-tree');
  });

  it('shows the usage table by identity, with a CSV export', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Usage' }).click();
    await page.getByRole('heading', { name: 'Usage', level: 1 }).waitFor(WAIT);
    await page.getByLabel('Group by').selectOption('identity');
    await page.getByRole('button', { name: 'Show usage' }).click();
    const table = page.getByRole('table', { name: 'Usage' });
    const planner = table.getByRole('row', { name: /acme-planner as requester/ });
    await planner.waitFor(WAIT);
    expect(await planner.getByRole('cell').allTextContents()).toEqual([
      'as requester',
      '1',
      '1',
      '0',
      '400',
      '100',
      '0.01 USD',
    ]);
    const csv = await page.getByRole('link', { name: 'Download as CSV' }).getAttribute('href');
    expect(csv).toMatch(/^\/api\/v1\/usage\?group_by=identity&from=.*&format=csv$/);
    const res = await page.request.get(ui.url('/').replace(/\/console\/?$/, '') + csv!);
    expect(res.headers()['content-type']).toMatch(/^text\/csv/);
    expect(await res.text()).toContain('acme-planner,requester,1,1,0,0,0');
    // The filters are in the page's URL: a reload shows the same table.
    expect(new URL(page.url()).search).toBe('?group_by=identity');
    await page.reload();
    await planner.waitFor(WAIT);
    expect(await page.getByLabel('Group by').inputValue()).toBe('identity');
    await ui.shot(page, 'console-usage');
  });
});
