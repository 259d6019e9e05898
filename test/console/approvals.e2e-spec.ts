/**
 * A first contact approved by a person, in a real browser (docs/api.md §16): organization
 * B's worker asks about organization A's requester; A's agent sends a streaming message
 * with the official SDK client and sees `auth-required`; a person of B signs in, sees the
 * count in the navigation, approves once from the inbox; the worker replies and the
 * stream sees `completed`.
 */
import { TaskState, type StreamResponse } from '@a2a-js/sdk';
import type { BrowserContext, Page } from 'playwright-core';
import type { TestApp } from '../support/app';
import { reply, rpc, v03Message, type Agent } from '../support/a2a';
import { say, sdkClient } from '../support/a2a-sdk';
import { startConsoleBrowser, WAIT, type ConsoleBrowser } from '../support/console-browser';
import { apiKey, bearer, createEnabledIdentity, PASSWORD, signup, type ConsoleAccount } from '../support/fixtures';

jest.setTimeout(180_000);

describe('Approvals in the Console', () => {
  let ui: ConsoleBrowser;
  let t: TestApp;
  let context: BrowserContext;
  let page: Page;
  let acme: ConsoleAccount;
  let globex: ConsoleAccount;
  let requester: Agent;
  let worker: Agent;
  let stream: AsyncGenerator<StreamResponse>;
  let taskId: string;
  const text = 'Please reconcile the March invoices for account 7.';

  /** A's side permits its identity to call B's worker (B's side is the one that asks). */
  const allowToWorker = (handle: string) =>
    t
      .http()
      .post('/api/v1/contact-rules')
      .set(bearer(acme))
      .send({
        identity: handle,
        direction: 'outbound',
        action: 'allow',
        peer: { type: 'identity', handle: worker.handle },
      })
      .expect(201);

  beforeAll(async () => {
    ui = await startConsoleBrowser();
    t = ui.t;
    // A: the requester's organization, which allows its agent to call B's worker.
    acme = await signup(t, 'Acme Robotics');
    globex = await signup(t, 'Globex');
    requester = await createEnabledIdentity(t, acme, { agent_handle: 'acme-buyer' });
    worker = await createEnabledIdentity(t, globex, { agent_handle: 'globex-billing' });
    await allowToWorker(requester.handle);
    context = await ui.browser.newContext();
    page = await ui.newPage(context);
  });

  afterEach(() => {
    expect(ui.takeErrors()).toEqual([]);
  });

  afterAll(async () => {
    await ui?.close();
  });

  it("B's person signs in and writes an inbound rule that asks a person about A", async () => {
    await page.goto(ui.url('/admission'));
    await page.getByLabel('Email').fill(globex.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Admission', level: 1 }).waitFor(WAIT);
    // Nothing waits yet: the navigation shows no count.
    await page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link', { name: 'Approvals', exact: true })
      .waitFor(WAIT);

    await page.getByLabel('Owner identity').fill(worker.handle);
    await page.getByLabel('Direction').selectOption('inbound');
    await page.getByLabel('Action').selectOption({ label: 'Ask a person' });
    await page.getByText('waits in Approvals until a person of your organization decides').waitFor(WAIT);
    await page.getByLabel('Peer type').selectOption('organization');
    await page.getByLabel('Peer organization id').fill(acme.organizationId);
    await page.getByRole('button', { name: 'Create rule' }).click();
    await page.getByText('Rule created.').waitFor(WAIT);
    await page.getByText(`organization ${acme.organizationId}`).waitFor(WAIT);
  });

  it("A's agent streams a message with the official SDK client and sees auth-required", async () => {
    const { client } = await sdkClient(t, requester, worker, 'JSONRPC', '1.0');
    stream = client.sendMessageStream(say(text));
    const state = await nextState(stream);
    taskId = state.taskId;
    expect(state.state).toBe(TaskState.TASK_STATE_AUTH_REQUIRED);
  });

  it("A's person sees the task held, waiting for approval", async () => {
    const theirs = await ui.browser.newContext();
    const a = await ui.newPage(theirs);
    await a.goto(ui.url('/tasks'));
    await a.getByLabel('Email').fill(acme.email);
    await a.getByLabel('Password').fill(PASSWORD);
    await a.getByRole('button', { name: 'Sign in' }).click();
    const row = a
      .getByRole('row')
      .filter({ has: a.getByRole('link', { name: `Task ${taskId.replace(/-/g, '').slice(-8)}` }) });
    await row.getByText('waiting for approval').waitFor(WAIT);
    await row.getByRole('link', { name: `Task ${taskId.replace(/-/g, '').slice(-8)}` }).click();
    await a.getByRole('status', { name: 'Task state' }).getByText('Waiting for approval').waitFor(WAIT);
    await a.getByText(text).waitFor(WAIT);
    await theirs.close();
  });

  it('B sees the count, opens the inbox and approves once; a decision made too late is refused in plain words', async () => {
    // A second tab, opened before anyone decides.
    const late = await ui.newPage(context);
    await late.goto(ui.url('/approvals'));
    const title = `${requester.handle} asks to send work to ${worker.handle}`;
    const lateItem = late.getByRole('article', { name: title });
    await lateItem.getByRole('button', { name: 'Approve once' }).waitFor(WAIT);

    await page.reload();
    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('link', { name: 'Approvals 1 pending' }).click();
    await page.getByRole('heading', { name: 'Approvals', level: 1 }).waitFor(WAIT);
    const item = page.getByRole('article', { name: title });
    await item.getByText(text).waitFor(WAIT);
    await item.getByText(acme.organizationId).waitFor(WAIT);
    await item.getByText(/expires in \d+ (days|hours)/).waitFor(WAIT);
    await ui.shot(page, 'approvals');

    await item.getByRole('button', { name: 'Approve once' }).click();
    await item.getByRole('status').getByText(`Approved once by ${globex.email}`, { exact: false }).waitFor(WAIT);
    await item.getByRole('button', { name: 'Approve once' }).waitFor({ state: 'detached', ...WAIT });
    // The count is read again after the decision: nothing waits any more.
    await nav.getByRole('link', { name: 'Approvals', exact: true }).waitFor(WAIT);
    // Approved, the task is the worker's side's to read.
    await item.getByRole('link', { name: `Task ${taskId}` }).waitFor(WAIT);

    await lateItem.getByRole('button', { name: 'Approve always' }).click();
    await lateItem.getByRole('alert').getByText('Someone already decided this request.').waitFor(WAIT);
    await late.close();
  });

  it("B denies another of A's identities always, with a reason: its task is rejected, a block rule written", async () => {
    const other = await createEnabledIdentity(t, acme, { agent_handle: 'acme-widgets' });
    await allowToWorker(other.handle);
    const sent = await rpc(t, worker.handle, other.key, 'message/send', {
      message: v03Message('Would you like to buy our widgets?'),
      configuration: { blocking: false },
    }).expect(200);
    expect(sent.body.result.status.state).toBe('auth-required');

    await page.reload();
    const item = page.getByRole('article', { name: `${other.handle} asks to send work to ${worker.handle}` });
    await item.getByRole('button', { name: 'Deny…' }).click();
    await item.getByLabel('Reason (optional)').fill('We buy our widgets elsewhere.');
    await item.getByLabel(/^Always/).check();
    await item.getByRole('button', { name: 'Deny always' }).click();
    await item.getByRole('status').getByText(`Denied always by ${globex.email}`, { exact: false }).waitFor(WAIT);
    await item.getByText('Reason: We buy our widgets elsewhere.').waitFor(WAIT);

    const task = await t.http().get(`/api/v1/tasks/${sent.body.result.id}`).set(apiKey(other.key)).expect(200);
    expect(task.body.status.state).toBe('rejected');
    // The inbox's filters are in its URL: a reload (or a shared link) shows the same list.
    await page.getByLabel('State').selectOption('denied');
    await page.waitForURL(/\/approvals\?state=denied$/, WAIT);
    await page.reload();
    await page.getByRole('heading', { name: 'Denied', level: 2 }).waitFor(WAIT);
    await item.getByText('Reason: We buy our widgets elsewhere.').waitFor(WAIT);
    expect(await page.getByRole('article').count()).toBe(1);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Admission' }).click();
    await page
      .getByRole('listitem')
      .filter({ hasText: `identity ${other.handle}` })
      .getByText('block', { exact: true })
      .waitFor(WAIT);
  });

  it("the worker replies and A's stream sees the task completed", async () => {
    await reply(t, taskId, worker.key, {
      state: 'completed',
      message: { parts: [{ kind: 'text', text: 'Reconciled: 14 invoices, no differences.' }] },
    }).expect(200);
    // Approved, the task went on as any send does (submitted), then the worker's reply ended it.
    const states: TaskState[] = [];
    while (states.at(-1) !== TaskState.TASK_STATE_COMPLETED) {
      states.push((await nextState(stream)).state);
    }
    expect(states).not.toContain(TaskState.TASK_STATE_AUTH_REQUIRED);
    expect(states).not.toContain(TaskState.TASK_STATE_REJECTED);
    expect((await stream.next()).done).toBe(true);

    await page.goto(ui.url(`/tasks/${taskId}`));
    await page.getByRole('status', { name: 'Task state' }).getByText('completed').waitFor(WAIT);
  });
});

/** The next state the stream tells (a task or a status update), with its task's id. */
async function nextState(stream: AsyncGenerator<StreamResponse>): Promise<{ taskId: string; state: TaskState }> {
  for (;;) {
    const next = await stream.next();
    if (next.done) {
      throw new Error('the stream ended');
    }
    const payload = next.value.payload;
    if (payload?.$case === 'task') {
      return { taskId: payload.value.id, state: payload.value.status!.state };
    }
    if (payload?.$case === 'statusUpdate') {
      return { taskId: payload.value.taskId, state: payload.value.status!.state };
    }
  }
}
