import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { createTestDatabase, dropDatabase, urlFor } from '../support/database';
import { eventually } from '../support/eventually';
import { agentPairOverHttp } from '../support/http-agents';
import { httpClient } from '../support/http-client';
import { freePort, startServerProcess, type ServerProcess } from '../support/server-process';
import { startUpstreamAgent, type UpstreamAgent } from '../support/upstream-agent';

/**
 * The forwarder's durability with real processes (docs/api.md §14, docs/events.md,
 * "Upstream agents: the forwarder"): a server forwarding to a slow upstream is killed
 * with SIGKILL mid-forward, after the upstream accepted the message. Another server
 * process claims the forward once its lease runs out and follows the upstream task
 * (it never sends an accepted message again): the upstream sees the message exactly
 * once, and the task completes with the upstream's answer.
 */
describe('a server SIGKILLed mid-forward', () => {
  let database: string;
  let db: Client;
  let upstream: UpstreamAgent;
  const servers: ServerProcess[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    db = new Client({ connectionString: urlFor(database) });
    await db.connect();
    upstream = await startUpstreamAgent(await freePort());
  });
  afterAll(async () => {
    for (const server of servers) {
      await server.stop('SIGKILL');
    }
    await db.end();
    await upstream.close();
    await dropDatabase(database);
  });

  const start = async () => {
    const server = await startServerProcess({
      DATABASE_URL: urlFor(database),
      WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true',
      EVENTS_POLL_INTERVAL_MS: '50',
      UPSTREAM_LEASE_MS: '2000',
    });
    servers.push(server);
    return server;
  };

  it('another process resumes the forward after the lease; the upstream sees the message once', async () => {
    const first = await start();
    let call = httpClient(first.baseUrl);
    const { token, requester, worker: bridged } = await agentPairOverHttp(call, 'Crash', ['requester', 'bridged']);
    expect(
      (
        await call(`/api/v1/identities/${bridged.handle}/upstream`, {
          method: 'PUT',
          token,
          body: { url: upstream.url },
        })
      ).status,
    ).toBe(200);

    const messageId = randomUUID();
    const sent = await call(`/a2a/${bridged.handle}`, {
      method: 'POST',
      key: requester.key,
      body: {
        jsonrpc: '2.0',
        id: 1,
        method: 'message/send',
        params: {
          message: { kind: 'message', role: 'user', messageId, parts: [{ kind: 'text', text: 'slow and steady' }] },
          configuration: { blocking: false },
        },
      },
    });
    expect(sent.status).toBe(200);
    const taskId = sent.body.result.id as string;
    // The first process has forwarded it, the upstream accepted it, and its stream is being followed.
    await eventually(
      async () =>
        (
          await db.query(
            `SELECT t.state, f.accepted FROM tasks t JOIN upstream_forwards f ON f.task_id = t.id WHERE t.id = $1`,
            [taskId],
          )
        ).rows[0],
      (row: { state: string; accepted: boolean } | undefined) => row?.state === 'working' && row.accepted,
    );
    await first.stop('SIGKILL');

    const second = await start();
    call = httpClient(second.baseUrl);
    // The second claims the forward once the dead one's lease has run out.
    await eventually(
      async () =>
        (await db.query(`SELECT attempts FROM upstream_forwards WHERE task_id = $1`, [taskId])).rows[0]
          .attempts as number,
      (n) => n === 2,
      30_000,
    );
    upstream.release(upstream.received.find((r) => r.messageId === messageId)!.taskId);
    const done = await eventually(
      () => call(`/api/v1/tasks/${taskId}`, { key: requester.key }).then((res) => res.body),
      (task: { status: { state: string }; artifacts: unknown[] }) => task.status.state === 'completed',
      30_000,
    );
    expect(done.artifacts).toEqual([expect.objectContaining({ artifactId: 'echo' })]);
    expect(upstream.received.filter((r) => r.messageId === messageId)).toHaveLength(1);
    // The forward is closed just after the task it completed commits (a statement of its own), so wait for it.
    const forwards = await eventually(
      async () =>
        (await db.query(`SELECT kind, status, accepted, attempts FROM upstream_forwards WHERE task_id = $1`, [taskId]))
          .rows,
      (rows: Array<{ status: string }>) => rows.every((row) => row.status !== 'pending'),
    );
    expect(forwards).toEqual([{ kind: 'message', status: 'succeeded', accepted: true, attempts: 2 }]);
  });
});
