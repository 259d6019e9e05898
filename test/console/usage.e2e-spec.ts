/**
 * Usage and delegation trees in the Console (docs/api.md §18), in a real browser: a
 * person of Acme opens a task that Acme's worker delegated to Globex, sees the tree —
 * Globex's own sub-delegation opaque — with the tree's totals, then the usage page's
 * charts (their figures checked against the API) and top trees, and the usage table by
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

  it('draws the usage charts: tasks and cost per day, the top identities and peers, the top trees', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Usage' }).click();
    await page.getByRole('heading', { name: 'Usage', level: 1 }).waitFor(WAIT);
    const api = async (path: string) => {
      const res = await page.request.get(ui.url('/').replace(/\/console\/?$/, '') + path);
      expect(res.status()).toBe(200);
      return res.json();
    };
    /** A chart's figures: its table's cells after the row's heading, by row. */
    const figures = async (name: string) => {
      const chart = page.getByRole('figure', { name });
      await chart.locator('canvas').first().waitFor(WAIT);
      await chart.getByText('Figures').click();
      return chart.locator('details tbody tr').evaluateAll((rows) =>
        rows.map((row) =>
          Array.from((row as unknown as { cells: ArrayLike<{ textContent: string }> }).cells)
            .slice(1)
            .map((cell) => Number(cell.textContent)),
        ),
      );
    };
    const sums = (rows: number[][]) => rows[0].map((_, i) => rows.reduce((sum, row) => sum + row[i], 0));
    // The page as a person first sees it: the charts drawn, their figures folded.
    for (const chart of ['Tasks per day', 'Cost per day']) {
      await page.getByRole('figure', { name: chart }).locator('canvas').first().waitFor(WAIT);
    }
    await page.getByRole('figure', { name: 'Top trees' }).getByRole('link').first().waitFor(WAIT);
    await ui.shot(page, 'console-usage-charts');

    // Per day, the figures are the API's: the child Acme's planner sent has ended; the root it works on has not.
    const daily = await api('/api/v1/usage?group_by=day');
    const sent = daily.groups.filter((g: { role: string }) => g.role === 'requester');
    const received = daily.groups.filter((g: { role: string }) => g.role === 'worker');
    const total = (groups: { tasks: number }[]) => groups.reduce((sum, g) => sum + g.tasks, 0);
    const tasks = await figures('Tasks per day');
    expect(tasks.length).toBeGreaterThanOrEqual(30);
    expect(sums(tasks)).toEqual([total(sent), total(received)]);
    expect(sums(tasks)).toEqual([1, 0]);
    const cost = await figures('Cost per day');
    expect(sums(cost)).toEqual([0.01, 0]);
    expect(sent[0].cost).toEqual([{ amount: '0.01', currency: 'USD' }]);
    // The canvas shows the series: pixels of the "Sent" line's color.
    const painted = await page
      .getByRole('figure', { name: 'Tasks per day' })
      .locator('canvas')
      .first()
      .evaluate((canvas) => {
        const c = canvas as unknown as {
          width: number;
          height: number;
          getContext(kind: '2d'): {
            getImageData(x: number, y: number, w: number, h: number): { data: ArrayLike<number> };
          };
        };
        const { data } = c.getContext('2d').getImageData(0, 0, c.width, c.height);
        let count = 0;
        for (let i = 0; i < data.length; i += 4) {
          const near = (value: number, target: number) => Math.abs(value - target) < 12;
          count +=
            near(data[i], 0x1f) && near(data[i + 1], 0x5f) && near(data[i + 2], 0xbf) && data[i + 3] > 200 ? 1 : 0;
        }
        return count;
      });
    expect(painted).toBeGreaterThan(10);

    const rowOf = async (figure: string, name: RegExp) => {
      const row = page.getByRole('figure', { name: figure }).getByRole('row', { name });
      await row.waitFor(WAIT);
      return row.getByRole('cell').allTextContents();
    };
    // Sent, received, the cost of those sent (the bar beside them is hidden from assistive technology).
    expect(await rowOf('Identities with the most tasks', /acme-planner/)).toEqual(['1', '0', '0.01 USD']);
    expect(await rowOf('Peers with the most tasks', /globex-billing/)).toEqual(['1', '0', '0.01 USD']);

    // The top trees: the root's tree, with the whole tree's totals (Globex's sub-delegation included), linking to it.
    const trees = await api('/api/v1/usage/trees');
    expect(trees.trees).toEqual([
      expect.objectContaining({ id: root.id, tasks: 3, input_tokens: 1300, output_tokens: 200 }),
    ]);
    const top = page.getByRole('figure', { name: 'Top trees' });
    const tree = top.getByRole('row', { name: /acme-buyer → acme-planner/ });
    await tree.waitFor(WAIT);
    expect((await tree.getByRole('cell').allTextContents()).slice(1)).toEqual(['3', '1500', '0.03 USD']);
    await tree.getByRole('link', { name: 'acme-buyer → acme-planner' }).click();
    await page.getByRole('list', { name: 'Delegation tree' }).waitFor(WAIT);
    expect(new URL(page.url()).pathname).toBe(`/console/tasks/${root.id}`);
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
    // A grouping the API does not know (an edited or old link): the table and its CSV by day.
    await page.goto(ui.url('/usage?group_by=team'));
    await page.getByRole('heading', { name: 'By day', level: 2 }).waitFor(WAIT);
    expect(await page.getByLabel('Group by').inputValue()).toBe('day');
    expect(await page.getByRole('link', { name: 'Download as CSV' }).getAttribute('href')).toMatch(
      /^\/api\/v1\/usage\?group_by=day&/,
    );
  });
});
