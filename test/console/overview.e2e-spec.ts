/**
 * The Console's overview, live events and empty states in a real browser (docs/console.md):
 * a new organization's lists say what each thing is and offer the first action; the
 * overview counts what happened (GET /api/v1/overview, docs/api.md §13) and lands after
 * sign-in; the events page follows the event stream, filters by type and resumes after a
 * lost connection with Last-Event-ID. Screenshots: docs/screenshots/ with UPDATE_SCREENSHOTS=1.
 */
import type { BrowserContext, Page, Request } from 'playwright-core';
import type { TestApp } from '../support/app';
import { rpc, v03Message, type Agent } from '../support/a2a';
import { startConsoleBrowser, WAIT, type ConsoleBrowser } from '../support/console-browser';
import { eventually } from '../support/eventually';
import { apiKey, bearer, createEnabledIdentity, PASSWORD, signup, type ConsoleAccount } from '../support/fixtures';
import { startReceiver, type Receiver } from '../support/receiver';

jest.setTimeout(240_000);

describe('Overview, live events and empty states in the Console', () => {
  let ui: ConsoleBrowser;
  let t: TestApp;
  let receiver: Receiver;
  let acme: ConsoleAccount;
  let globex: ConsoleAccount;
  let context: BrowserContext;
  let page: Page;

  const send = async (requester: Agent, worker: Agent, text: string): Promise<string> => {
    const sent = await rpc(t, worker.handle, requester.key, 'message/send', {
      message: v03Message(text),
      configuration: { blocking: false },
    }).expect(200);
    return sent.body.result?.id as string;
  };
  const answer = (taskId: string, worker: Agent, state: string) =>
    t.http().post(`/api/v1/tasks/${taskId}/reply`).set(apiKey(worker.key)).send({ state }).expect(200);
  const overviewOf = async (account: ConsoleAccount) =>
    (await t.http().get('/api/v1/overview').set(bearer(account)).expect(200)).body;
  const isFocused = (p: Page, label: string) =>
    p
      .getByLabel(label, { exact: true })
      .evaluate((el: { ownerDocument: { activeElement: unknown } }) => el === el.ownerDocument.activeElement);

  beforeAll(async () => {
    // The server ends each event stream after 2 s: the browser must resume it, again and again.
    ui = await startConsoleBrowser({
      WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true',
      EVENTS_POLL_INTERVAL_MS: '100',
      SSE_MAX_DURATION_MS: '2000',
    });
    t = ui.t;
    receiver = await startReceiver(() => 500);
    acme = await signup(t, 'Acme Robotics');
    globex = await signup(t, 'Globex');
    context = await ui.browser.newContext();
    page = await ui.newPage(context);
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  afterEach(() => {
    expect(ui.takeErrors()).toEqual([]);
  });

  afterAll(async () => {
    await receiver?.close();
    await ui?.close();
  });

  it("a new organization's lists say what each thing is and offer the first action", async () => {
    await page.goto(ui.url('/'));
    await page.getByLabel('Email').fill(acme.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    // Signing in lands on the overview, first in the navigation.
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor(WAIT);
    const nav = page.getByRole('navigation', { name: 'Main' });
    expect((await nav.getByRole('link').allInnerTexts())[0]).toBe('Overview');
    await page.getByText('No tasks in this period.').waitFor(WAIT);
    await page.getByText('Nothing needs attention').waitFor(WAIT);

    const journeys: [string, string, string, string?][] = [
      // [nav link, what it is, first action, the field it starts with]
      ['Identities', 'An identity is one agent of your organization', 'Create your first identity', 'Handle'],
      ['API keys', 'An API key lets a program act for you', 'Mint your first key', 'Key scope'],
      [
        'Admission',
        'A contact rule says who may send work to your identities',
        'Write your first rule',
        'Owner identity',
      ],
      ['Webhooks', 'A webhook is an HTTPS endpoint of yours', 'Create your first webhook', 'Endpoint URL'],
      ['Members', 'Invite the people who run your agents with you', 'Invite a person', 'Their email'],
      ['Tasks', 'A task is one piece of work an agent sends another', 'Create an identity'],
      ['Approvals', 'An approval request is a first task from a peer', 'Write a rule that asks'],
      ['Events', 'An event is a change your organization', 'Create an identity'],
    ];
    for (const [link, teaches, action, field] of journeys) {
      await nav.getByRole('link', { name: link, exact: true }).click();
      await page.getByText(teaches).waitFor(WAIT);
      if (field) {
        await page.getByRole('button', { name: action }).click();
        expect([link, await isFocused(page, field)]).toEqual([link, true]);
      } else {
        await page.getByRole('link', { name: action }).waitFor(WAIT);
      }
    }
    // A filtered list that matches nothing says only that.
    await nav.getByRole('link', { name: 'Tasks', exact: true }).click();
    await page.getByLabel('State').selectOption('failed');
    await page.getByText('No tasks match.').waitFor(WAIT);
  });

  it('the overview counts tasks by state, time to complete, denials, deliveries and what needs attention', async () => {
    const requester = await createEnabledIdentity(t, acme, { agent_handle: 'acme-buyer' });
    const worker = await createEnabledIdentity(t, acme, { agent_handle: 'acme-billing' });
    const stranger = await createEnabledIdentity(t, globex, { agent_handle: 'globex-scout' });
    const tasks = await Promise.all(
      ['one', 'two', 'three', 'four'].map((n) => send(requester, worker, `Invoice ${n}`)),
    );
    await answer(tasks[0], worker, 'completed');
    await answer(tasks[1], worker, 'completed');
    await answer(tasks[2], worker, 'failed');
    // Another organization's caller, refused by admission: a denial on both sides' overviews.
    const denied = await rpc(t, worker.handle, stranger.key, 'message/send', { message: v03Message('hello?') });
    expect(JSON.stringify(denied.body)).toContain('admission_denied');
    // An identity bridged to an upstream agent that answers 500: its forward retries.
    const bridge = await createEnabledIdentity(t, acme, { agent_handle: 'acme-bridge' });
    await t
      .http()
      .put(`/api/v1/identities/${bridge.handle}/upstream`)
      .set(bearer(acme))
      .send({ url: new URL('/upstream', receiver.url).href, protocol_version: '0.3', binding: 'JSONRPC' })
      .expect(200);
    await send(requester, bridge, 'Forward this');
    // A webhook whose endpoint fails, and a key that expires in three days.
    const hook = await t
      .http()
      .post('/api/v1/webhooks')
      .set(bearer(acme))
      .send({ url: new URL('/failing', receiver.url).href, events: ['*'] })
      .expect(201);
    await t.http().post(`/api/v1/webhooks/${hook.body.id}/test`).set(bearer(acme)).expect(202);
    const expiresAt = new Date(Date.now() + 3 * 86_400_000).toISOString();
    const key = await t
      .http()
      .post('/api/v1/api-keys')
      .set(bearer(acme))
      .send({ scope: 'admin', label: 'nightly export', expires_at: expiresAt })
      .expect(201);

    const overview = await eventually(
      () => overviewOf(acme),
      (o) =>
        o.attention.failing_webhooks.length === 1 &&
        o.attention.failing_upstreams.length === 1 &&
        o.totals.denials.inbound === 1,
    );
    expect(overview.hours).toBe(24);
    expect(overview.series).toHaveLength(24);
    expect(overview.totals.tasks).toEqual({ completed: 2, failed: 1, canceled: 0, rejected: 0, open: 2 });
    // The hours add up to the totals (the tasks' hour is the last, or the one before if an hour just began).
    type Counts = Record<string, number>;
    const summed = overview.series.reduce((sum: Counts, h: { tasks: Counts }) => {
      Object.entries(h.tasks).forEach(([state, n]) => (sum[state] = (sum[state] ?? 0) + n));
      return sum;
    }, {});
    expect(summed).toEqual(overview.totals.tasks);
    const hour = overview.series.findLast((h: { time_to_complete_ms: Counts }) => h.time_to_complete_ms.p50 !== null);
    expect(hour.time_to_complete_ms.p50).toBeGreaterThanOrEqual(0);
    expect(hour.time_to_complete_ms.p95).toBeGreaterThanOrEqual(hour.time_to_complete_ms.p50);
    expect(overview.totals.denials).toEqual({ inbound: 1, outbound: 0 });
    expect(overview.totals.webhook_deliveries.failed + overview.totals.webhook_deliveries.retrying).toBeGreaterThan(0);
    expect(overview.attention.failing_webhooks[0]).toMatchObject({ id: hook.body.id, status: 'active' });
    expect(overview.attention.failing_upstreams).toEqual([
      { identity: 'acme-bridge', failed: 0, retrying: 1, last_error_at: expect.any(String) },
    ]);
    expect(overview.totals.upstream_forwards).toEqual({ succeeded: 0, failed: 0, retrying: 1 });
    expect(overview.attention.expiring_keys.map((k: { id: string }) => k.id)).toEqual([key.body.id]);
    expect(overview.approvals_pending).toBe(0);
    // Each organization its own figures: Globex sent the denied call and has no tasks.
    const theirs = await overviewOf(globex);
    expect(theirs.totals.denials).toEqual({ inbound: 0, outbound: 1 });
    expect(theirs.totals.tasks).toEqual({ completed: 0, failed: 0, canceled: 0, rejected: 0, open: 0 });
    // Bad input is a 400 naming the field; an agent key may not read it.
    const bad = await t.http().get('/api/v1/overview?hours=0').set(bearer(acme)).expect(400);
    expect(bad.body.errors[0].field).toBe('hours');
    const overWeek = await t.http().get('/api/v1/overview?hours=169').set(bearer(acme)).expect(400);
    expect(overWeek.body.errors[0].field).toBe('hours');
    // `hours` whole hours ending with the current one, one entry each, from `since`.
    const week = (await t.http().get('/api/v1/overview?hours=168').set(bearer(acme)).expect(200)).body;
    expect(week.series).toHaveLength(168);
    expect(week.series[0].hour).toBe(week.since);
    expect(Date.parse(week.series[167].hour) - Date.parse(week.since)).toBe(167 * 3_600_000);
    expect(Date.parse(week.series[167].hour)).toBeLessThanOrEqual(Date.now());
    expect(Date.now() - Date.parse(week.series[167].hour)).toBeLessThan(2 * 3_600_000);
    await t.http().get('/api/v1/overview').set(apiKey(worker.key)).expect(403);

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Overview' }).click();
    const stats = page.getByRole('region', { name: 'In the last 24 hours' });
    await stats.getByText('Tasks', { exact: true }).waitFor(WAIT);
    expect(await stats.locator('dd').first().innerText()).toBe('5');
    const attention = page.getByRole('list', { name: 'Needs attention' });
    await attention.getByText(/is failing since/).waitFor(WAIT);
    await attention.getByRole('link', { name: 'nightly export' }).waitFor(WAIT);
    await attention.getByRole('link', { name: 'acme-bridge' }).waitFor(WAIT);
    // Each chart has its figures as a table, for screen readers and for the numbers.
    const tasksChart = page.getByRole('figure', { name: 'Tasks per hour, by state now' });
    await tasksChart.locator('canvas').first().waitFor(WAIT);
    await ui.shot(page, 'overview');
    await tasksChart.getByText('Figures').click();
    const rows = await tasksChart.locator('details tbody tr').evaluateAll((all) =>
      all.map((row) =>
        Array.from((row as unknown as { cells: ArrayLike<{ textContent: string }> }).cells)
          .slice(1)
          .map((cell) => Number(cell.textContent)),
      ),
    );
    expect(rows).toHaveLength(24);
    // Per state, over the hours: completed, failed, rejected, canceled, open.
    expect([0, 1, 2, 3, 4].map((i) => rows.reduce((sum, row) => sum + row[i], 0))).toEqual([2, 1, 0, 0, 2]);
    await page.goto(ui.url('/tasks'));
    await page.getByRole('link', { name: `Task ${tasks[0].replace(/-/g, '').slice(-8)}` }).waitFor(WAIT);
    await ui.shot(page, 'tasks');
  });

  it('the events page follows the stream, filters by type, and resumes after a lost connection', async () => {
    const streams: Request[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/api/v1/events/stream')) {
        streams.push(request);
      }
    });
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Events' }).click();
    const status = page.getByRole('status').filter({ hasText: /Live|Connecting|reconnecting/ });
    await status.getByText(/^Live/).waitFor(WAIT);
    const events = page.getByRole('list', { name: 'Events' });
    // The recent ones are listed (the tasks above), newest first.
    await events.getByText('A task was created: acme-buyer → acme-billing').first().waitFor(WAIT);

    const mint = async (label: string) =>
      (await t.http().post('/api/v1/api-keys').set(bearer(acme)).send({ scope: 'admin', label }).expect(201)).body;
    await mint('live one');
    await events.getByText('A key was minted: live one.').waitFor(WAIT);

    // Filter: only task status changes (in the URL, so it is kept on reload).
    await page.getByLabel('Event type').selectOption('task.status');
    expect(new URL(page.url()).search).toBe('?type=task.status');
    await status.getByText(/^Live/).waitFor(WAIT);
    await events
      .getByText(/a task's state changed/i)
      .first()
      .waitFor(WAIT);
    expect(await events.getByText('A key was minted').count()).toBe(0);
    await page.getByLabel('Event type').selectOption('');
    await status.getByText(/^Live/).waitFor(WAIT);
    await mint('live two');
    await events.getByText('A key was minted: live two.').waitFor(WAIT);

    // The server ends the stream after 2 s; while the browser cannot reconnect, events
    // happen; when it can, it resumes after the last one it received (Last-Event-ID).
    await page.route('**/api/v1/events/stream**', (route) => route.abort());
    await status.getByText(/reconnecting/).waitFor(WAIT);
    const missed = [await mint('while away 1'), await mint('while away 2')];
    await page.unroute('**/api/v1/events/stream**');
    for (const key of missed) {
      await events.getByText(`A key was minted: ${key.label}.`).waitFor(WAIT);
      expect(await events.getByText(`A key was minted: ${key.label}.`).count()).toBe(1);
    }
    const resumedAfter = (await Promise.all(streams.map((request) => request.allHeaders())))
      .map((headers) => headers['last-event-id'])
      .filter(Boolean);
    expect(resumedAfter.length).toBeGreaterThan(0);
    expect(resumedAfter.at(-1)).toMatch(/^evt_/);
    // The only errors: Chromium's lines for the connections this test refused.
    const errors = ui.takeErrors().filter((error) => !/net::ERR_FAILED \(.*\/api\/v1\/events\/stream/.test(error));
    expect(errors).toEqual([]);
    // Every event shown once, however often the stream was resumed.
    const ids = await events.locator('summary .visually-hidden').allInnerTexts();
    expect(new Set(ids).size).toBe(ids.length);
    await ui.shot(page, 'events');
  });
});
