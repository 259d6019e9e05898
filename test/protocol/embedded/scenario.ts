import 'reflect-metadata';
import { parseSseStream } from '@a2a-js/sdk';
import pino from 'pino';
import { DataSource } from 'typeorm';
import { createApp } from '../../../src/app.factory';
import { loadConfig } from '../../../src/config/config';

/**
 * The protocol on the embedded database (PGlite, no DATABASE_URL), run by
 * embedded.e2e-spec.ts in a process of its own: PGlite is loaded as an ES module,
 * which Node does natively and Jest's module loader does not. It drives the real
 * application over HTTP and prints what it observed, as JSON, for the spec to check.
 */
async function main(): Promise<void> {
  const config = loadConfig({ DATA_DIR: process.env.DATA_DIR!, LOG_LEVEL: 'silent', GRPC_PORT: 'off' });
  const app = await createApp(config, pino({ level: 'silent' }));
  await app.listen(0, '127.0.0.1');
  const base = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
  const db = app.get(DataSource);
  const call = async (path: string, init: { key?: string; token?: string; body?: unknown; method?: string } = {}) => {
    const res = await fetch(base + path, {
      method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
      headers: {
        'content-type': 'application/json',
        ...(init.key ? { 'x-api-key': init.key } : {}),
        ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
      },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  try {
    const signup = await call('/api/v1/console/signup', {
      body: { organization_name: 'Local', email: 'embedded@local.test', password: 'correct horse battery staple' },
    });
    const organizationId: string = signup.body.organization.id;
    const agent = async (handle: string) => {
      const [{ id }] = await db.query(
        `INSERT INTO identities (agent_handle, organization_id, claimed_at, enabled) VALUES ($1, $2, now(), true) RETURNING id`,
        [handle, organizationId],
      );
      const minted = await call('/api/v1/api-keys', {
        token: signup.body.token,
        body: { scope: 'agent', scoped_identity_id: id },
      });
      return { handle, key: minted.body.key as string };
    };
    const requester = await agent('embedded-requester');
    const worker = await agent('embedded-worker');
    const rpc = (method: string, params: unknown) =>
      call(`/a2a/${worker.handle}`, { key: requester.key, body: { jsonrpc: '2.0', id: 1, method, params } });
    const message = (text: string, extra: object = {}) => ({
      kind: 'message',
      role: 'user',
      messageId: `m-${text}`,
      parts: [{ kind: 'text', text }],
      ...extra,
    });
    const replyTo = (taskId: string, body: unknown) => call(`/api/v1/tasks/${taskId}/reply`, { key: worker.key, body });

    // 1. A stream wakes on the worker's reply (the in-process notifier).
    const response = await fetch(`${base}/a2a/${worker.handle}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': requester.key },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'message/stream',
        params: { message: message('stream me') },
      }),
    });
    const events = parseSseStream(response);
    const first = JSON.parse((await events.next()).value!.data);
    const taskId: string = first.result.id;
    await replyTo(taskId, {
      state: 'working',
      artifacts: [{ artifactId: 'out', parts: [{ kind: 'text', text: 'partial' }] }],
    });
    await replyTo(taskId, { state: 'completed', message: { parts: [{ kind: 'text', text: 'done' }] } });
    const streamed: unknown[] = [first.result.kind];
    for await (const event of events) {
      streamed.push(JSON.parse(event.data).result.kind + ':' + (JSON.parse(event.data).result.status?.state ?? ''));
    }

    // 2. A blocking send returns when the worker replies.
    const blocking = rpc('message/send', { message: message('block me') });
    let blockedTask: string | undefined;
    for (let i = 0; i < 500 && !blockedTask; i++) {
      const list = await call('/api/v1/tasks?role=worker&state=submitted', { key: worker.key });
      blockedTask = list.body.tasks[0]?.id;
      if (!blockedTask) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
    await replyTo(blockedTask!, { state: 'input-required' });
    const blocked = await blocking;

    // 3. Racing replies on the single embedded connection.
    const raced = await rpc('message/send', { message: message('race'), configuration: { blocking: false } });
    const statuses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        replyTo(raced.body.result.id, { message: { parts: [{ kind: 'text', text: `r${i}` }] } }).then((r) => r.status),
      ),
    );
    const seqs = (await db.query(`SELECT seq FROM task_events WHERE task_id = $1 ORDER BY seq`, [
      raced.body.result.id,
    ])) as Array<{ seq: number }>;
    const got = await rpc('tasks/get', { id: raced.body.result.id, historyLength: 3 });

    // 4. A send that starts a task is one statement; PGlite's constraint errors answer a
    // retry (the same task, nothing written) and a context that is not the pair's.
    const tasks = async () => ((await db.query(`SELECT count(*)::int AS n FROM tasks`)) as Array<{ n: number }>)[0].n;
    const before = await tasks();
    const retried = await rpc('message/send', { message: message('race'), configuration: { blocking: false } });
    const foreign = await rpc('message/send', {
      message: message('elsewhere', { contextId: '00000000-0000-4000-8000-000000000009' }),
      configuration: { blocking: false },
    });

    process.stdout.write(
      JSON.stringify({
        streamed,
        blocked: blocked.body.result.status.state,
        racedStatuses: [...new Set(statuses)],
        seqs: seqs.map((row) => row.seq),
        recentHistory: got.body.result.history.map((m: { parts: Array<{ text: string }> }) => m.parts[0].text).length,
        retry: retried.body.result?.id === raced.body.result.id ? 'same task' : retried.body,
        foreignContext: foreign.body.error?.code,
        tasksWritten: (await tasks()) - before,
      }) + '\n',
    );
  } finally {
    await app.close();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
