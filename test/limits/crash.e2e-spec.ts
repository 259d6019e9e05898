import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { createTestDatabase, dropDatabase, urlFor } from '../support/database';
import { agentPairOverHttp } from '../support/http-agents';
import { httpClient } from '../support/http-client';
import { startServerProcess, type ServerProcess } from '../support/server-process';

/**
 * Durability under a crash: protocol traffic (sends and worker replies) runs
 * against a real server process, which is killed with SIGKILL mid-load. After a
 * restart on the same database, every send and reply that got a success answer
 * must be in the ledger, and no task may be in an impossible state.
 */
describe('a SIGKILL mid-load loses nothing that was acknowledged', () => {
  let database: string;
  let server: ServerProcess | undefined;

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await server?.stop('SIGKILL');
    await dropDatabase(database);
  });

  const start = () =>
    startServerProcess({
      DATABASE_URL: urlFor(database),
      RATE_LIMIT_PROTOCOL_PER_MINUTE: '1000000',
      RATE_LIMIT_REST_PER_MINUTE: '1000000',
      RATE_LIMIT_PUBLIC_PER_MINUTE: '1000000',
    });

  it('keeps every acknowledged send and reply, and every task legal', async () => {
    server = await start();
    const call = httpClient(server.baseUrl);
    const { requester, worker } = await agentPairOverHttp(call, 'Crash');

    const acknowledgedSends = new Map<string, string>(); // task id → messageId
    const acknowledgedReplies = new Set<string>();
    let stop = false;
    const sender = async () => {
      while (!stop) {
        const messageId = randomUUID();
        try {
          const res = await call(`/a2a/${worker.handle}`, {
            method: 'POST',
            key: requester.key,
            body: {
              jsonrpc: '2.0',
              id: 1,
              method: 'message/send',
              params: {
                message: { kind: 'message', role: 'user', messageId, parts: [{ kind: 'text', text: 'work' }] },
                configuration: { blocking: false },
              },
            },
          });
          if (res.status === 200 && res.body?.result?.id) {
            acknowledgedSends.set(res.body.result.id, messageId);
          }
        } catch {
          return; // the server is gone
        }
      }
    };
    const replier = async () => {
      while (!stop) {
        const pending = [...acknowledgedSends.keys()].filter((id) => !acknowledgedReplies.has(id));
        if (pending.length === 0) {
          await new Promise((resolve) => setTimeout(resolve, 5));
          continue;
        }
        const id = pending[Math.floor(Math.random() * pending.length)];
        try {
          const res = await call(`/api/v1/tasks/${id}/reply`, {
            method: 'POST',
            key: worker.key,
            body: { state: 'completed', message: { parts: [{ kind: 'text', text: 'done' }] } },
          });
          if (res.status === 200) {
            acknowledgedReplies.add(id);
          }
        } catch {
          return;
        }
      }
    };
    const load = Promise.all([...Array.from({ length: 6 }, sender), ...Array.from({ length: 2 }, replier)]);

    // Let the load build, then kill the server without warning.
    while (acknowledgedSends.size < 150 || acknowledgedReplies.size < 30) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(await server.stop('SIGKILL')).toBeNull();
    stop = true;
    await load;

    server = await start();
    const after = httpClient(server.baseUrl);
    for (const [taskId, messageId] of acknowledgedSends) {
      const task = await after(`/api/v1/tasks/${taskId}`, { key: requester.key });
      expect({ taskId, status: task.status }).toEqual({ taskId, status: 200 });
      expect(task.body.history.map((m: { messageId: string }) => m.messageId)).toContain(messageId);
      if (acknowledgedReplies.has(taskId)) {
        expect({ taskId, state: task.body.status.state }).toEqual({ taskId, state: 'completed' });
      }
    }

    const db = new Client({ connectionString: urlFor(database) });
    await db.connect();
    try {
      const {
        rows: [facts],
      } = await db.query(`
        SELECT count(*)::int AS tasks,
               count(*) FILTER (WHERE NOT EXISTS (SELECT 1 FROM messages m WHERE m.task_id = t.id))::int AS without_messages,
               count(*) FILTER (WHERE state NOT IN ('submitted', 'completed'))::int AS unexpected_states
          FROM tasks t`);
      expect(facts.tasks).toBeGreaterThanOrEqual(acknowledgedSends.size);
      expect(facts).toMatchObject({ without_messages: 0, unexpected_states: 0 });
    } finally {
      await db.end();
    }
  });
});
