import { randomUUID } from 'node:crypto';
import { SendMessageRequest } from '@a2a-js/sdk';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { startApp, type TestApp } from '../support/app';
import { enabledAgent, reply, rpc, v03Message, v1Message, type Agent } from '../support/a2a';
import { apiKey, mintAdminKey, signup, type ConsoleAccount } from '../support/fixtures';
import { grpcClient, metadataOf, unary } from '../support/grpc';

/**
 * Delegation trees (docs/api.md §18): a task sent by the worker of an open task that it
 * names in `referenceTaskIds` is that task's child; every other reference stays a plain
 * reference. The tree route shows each organization its own nodes whole and the others'
 * opaque; the depth limit refuses a send on every binding.
 */
describe('delegation trees', () => {
  let t: TestApp;
  let acme: ConsoleAccount;
  let globex: ConsoleAccount;
  let initech: ConsoleAccount;
  const admins: Record<string, string> = {};

  beforeAll(async () => {
    t = await startApp({ GRPC_PORT: '0', GRPC_HOST: '127.0.0.1' });
    acme = await signup(t, 'Acme');
    globex = await signup(t, 'Globex');
    initech = await signup(t, 'Initech');
    for (const account of [acme, globex, initech]) {
      admins[account.organizationId] = await mintAdminKey(t, account);
    }
  });
  afterAll(() => t.close());

  /** An identity that any organization's identities may call (blacklist: no allow rule needed). */
  const open = (account: ConsoleAccount) => enabledAgent(t, account, { filterMode: 'blacklist' });

  /** A new task from `requester` to `worker`, naming `refs`; its id. */
  async function send(requester: Agent, worker: Agent, refs: string[] = [], app = t): Promise<string> {
    const res = await rpc(app, worker.handle, requester.key, 'message/send', {
      message: v03Message('delegated', refs.length > 0 ? { referenceTaskIds: refs } : {}),
      configuration: { blocking: false },
    }).expect(200);
    if (!res.body.result) {
      throw new Error(`send failed: ${JSON.stringify(res.body)}`);
    }
    return res.body.result.id as string;
  }

  const tree = (taskId: string, key: string, query = '') =>
    t.http().get(`/api/v1/tasks/${taskId}/tree${query}`).set(apiKey(key));

  type Node = Record<string, unknown> & { children?: Node[] };

  it('crosses organizations: each sees its own tasks whole and the others opaque — no id, pair or timing', async () => {
    const [a, b, c, d] = [await open(acme), await open(acme), await open(globex), await open(initech)];
    const p = await send(a, b);
    const q = await send(b, c, [p]);
    const r = await send(c, d, [q]);

    const asAcme = (await tree(p, admins[acme.organizationId]).expect(200)).body;
    expect(asAcme.ancestors).toEqual([]);
    expect(asAcme.task).toMatchObject({ id: p, depth: 0, state: 'submitted', worker: { agent_handle: b.handle } });
    const [qNode] = asAcme.task.children as Node[];
    expect(qNode).toMatchObject({
      id: q,
      depth: 1,
      requester: { agent_handle: b.handle },
      worker: { agent_handle: c.handle },
    });
    const [rNode] = qNode.children!;
    expect(rNode).toEqual({
      opaque: true,
      depth: 2,
      state: 'submitted',
      usage: expect.objectContaining({ input_tokens: 0, messages: 1 }),
    });
    expect(asAcme.totals).toMatchObject({ tasks: 3, by_state: { submitted: 3 } });

    const asInitech = (await tree(r, admins[initech.organizationId]).expect(200)).body;
    expect(asInitech.ancestors).toEqual([
      expect.objectContaining({ opaque: true, depth: 0 }),
      expect.objectContaining({ opaque: true, depth: 1 }),
    ]);
    expect(JSON.stringify(asInitech.ancestors)).not.toMatch(
      new RegExp(`${p}|${q}|${a.handle}|${b.handle}|${c.handle}`),
    );
    expect(asInitech.task).toMatchObject({ id: r, depth: 2 });
    expect(asInitech.totals.tasks).toBe(3);

    // The worker in the middle, by its own key: its task as a worker and as a requester; the rest opaque.
    const asB = (await tree(q, b.key).expect(200)).body;
    expect(asB.ancestors).toEqual([expect.objectContaining({ id: p })]);
    expect(asB.task.children).toEqual([expect.objectContaining({ opaque: true, depth: 2 })]);

    // A task the caller may not read at all: 404, as every read.
    await tree(p, admins[initech.organizationId]).expect(404);
    await tree(randomUUID(), admins[acme.organizationId]).expect(404);
    await tree('not-a-task', admins[acme.organizationId]).expect(404);
  });

  it('forged parents stay plain references: the caller not the worker, the parent closed or unknown', async () => {
    const [a, b, c] = [await open(acme), await open(acme), await open(globex)];
    const p = await send(a, b);
    const byRequester = await send(a, c, [p]); // a is p's requester, not its worker
    const unknown = await send(b, c, [randomUUID(), 'not-a-uuid']);
    const closed = await send(a, b);
    await reply(t, closed, b.key, { state: 'completed' }).expect(200);
    const afterClose = await send(b, c, [closed]);
    for (const id of [byRequester, unknown, afterClose]) {
      const body = (await tree(id, admins[globex.organizationId]).expect(200)).body;
      expect({ ancestors: body.ancestors, depth: body.task.depth, tasks: body.totals.tasks }).toEqual({
        ancestors: [],
        depth: 0,
        tasks: 1,
      });
    }
    // The reference is kept on the message as it was sent.
    const messages = await t.http().get(`/api/v1/tasks/${byRequester}/messages`).set(apiKey(c.key)).expect(200);
    expect(messages.body.messages[0].referenceTaskIds).toEqual([p]);
    // Several references: the first that qualifies is the parent.
    const child = await send(b, c, [randomUUID(), closed, p]);
    const body = (await tree(p, admins[acme.organizationId]).expect(200)).body;
    expect((body.task.children as Node[]).map((n) => n.id)).toEqual([child]);
  });

  it('fan-out is capped per node and says so', async () => {
    const [a, b, c] = [await open(acme), await open(acme), await open(acme)];
    const p = await send(a, b);
    for (let i = 0; i < 3; i++) {
      await send(b, c, [p]);
    }
    const body = (await tree(p, admins[acme.organizationId], '?fan_out=2').expect(200)).body;
    expect(body.task.children).toHaveLength(2);
    expect(body.task.children_truncated).toBe(true);
    expect(body.totals.tasks).toBe(4);
    await tree(p, admins[acme.organizationId], '?fan_out=0').expect(400);
  });

  it('a held child is shown to its requester side only, and counts in the tree', async () => {
    const [a, b] = [await open(acme), await open(acme)];
    const gated = await enabledAgent(t, globex, { filterMode: 'approval' });
    const p = await send(a, b);
    const held = await send(b, gated, [p]);
    const asB = (await tree(held, b.key).expect(200)).body;
    expect(asB.task).toMatchObject({ id: held, depth: 1, state: 'auth-required' });
    // The worker's side does not learn of it: not by its id, nor under the parent.
    await tree(held, gated.key).expect(404);
    await tree(held, admins[globex.organizationId]).expect(404);
    const asAcme = (await tree(p, admins[acme.organizationId]).expect(200)).body;
    expect(asAcme.task.children).toEqual([expect.objectContaining({ id: held })]);
  });

  describe('depth limit', () => {
    let shallow: TestApp;
    beforeAll(async () => {
      shallow = await startApp({ LEDGER_MAX_TREE_DEPTH: '2', GRPC_PORT: '0', GRPC_HOST: '127.0.0.1' }, t);
    });
    afterAll(() => shallow.close());

    it('a send that would go deeper is refused on every binding, naming the reason; the tree stays as it was', async () => {
      const agents = [await open(acme), await open(acme), await open(acme), await open(acme)];
      const root = await send(agents[0], agents[1], [], shallow);
      const one = await send(agents[1], agents[2], [root], shallow);
      const two = await send(agents[2], agents[3], [one], shallow);
      const [deep, target] = [agents[3], await open(acme)];

      const jsonRpc = await rpc(shallow, target.handle, deep.key, 'message/send', {
        message: v03Message('deeper', { referenceTaskIds: [two] }),
      }).expect(200);
      expect(jsonRpc.body.error).toMatchObject({ code: -32602 });
      expect(jsonRpc.body.error.message).toMatch(/depth 3 of its delegation tree; at most 2 is allowed/);
      // With a push notification config the send is a transaction of its own (LedgerService.recordSend): refused alike.
      const withPush = await rpc(shallow, target.handle, deep.key, 'message/send', {
        message: v03Message('deeper', { referenceTaskIds: [two] }),
        configuration: { blocking: false, pushNotificationConfig: { url: 'https://hooks.example.test/a2a' } },
      }).expect(200);
      expect(withPush.body.error).toMatchObject({ code: -32602 });
      expect(withPush.body.error.message).toMatch(/at most 2 is allowed/);

      const rest = await shallow
        .http()
        .post(`/a2a/${target.handle}/rest/message:send`)
        .set({ ...apiKey(deep.key), 'A2A-Version': '1.0' })
        .send({ message: v1Message('deeper', { referenceTaskIds: [two] }) })
        .expect(400);
      expect(JSON.stringify(rest.body)).toMatch(/LEDGER_MAX_TREE_DEPTH/);

      const grpc = await unary(
        grpcClient(shallow),
        'sendMessage',
        SendMessageRequest.fromJSON({
          tenant: target.handle,
          message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'deeper' }], referenceTaskIds: [two] },
        }),
        metadataOf(apiKey(deep.key)),
      );
      expect(grpc.code).toBe(GrpcStatus.INVALID_ARGUMENT);
      expect(grpc.details).toMatch(/tree; at most 2 is allowed/);

      const body = (await tree(root, admins[acme.organizationId]).expect(200)).body;
      expect(body.totals.tasks).toBe(3);
      // Without the reference, the same send is a new root.
      await send(deep, target, [], shallow);
    });
  });
});
