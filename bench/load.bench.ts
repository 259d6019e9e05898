import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Client } from 'pg';
import { dropDatabase, urlFor, withServer } from '../test/support/database';
import { httpClient } from '../test/support/http-client';
import { startServerProcess } from '../test/support/server-process';
import { cpuTimeMs, percentile, table } from './lib';

/**
 * Issue 7: a steady mixed load against one server process for a fixed time —
 * protocol sends, worker replies, task reads and directory reads, from concurrent
 * virtual users — reporting throughput, p50/p99 per operation and errors.
 */
type Op = 'send' | 'reply' | 'get' | 'directory' | 'card';
const MIX: Array<[Op, number]> = [
  ['send', 35],
  ['reply', 20],
  ['get', 25],
  ['directory', 12],
  ['card', 8],
];

export async function run(): Promise<void> {
  const duration = Number(process.env.BENCH_DURATION ?? 30) * 1000;
  const users = Number(process.env.BENCH_USERS ?? 32);
  const database = `a2a_bench_load_${process.pid}_${Date.now()}`;
  await withServer((c) => c.query(`CREATE DATABASE "${database}"`));
  const unlimited = '10000000';
  const server = await startServerProcess(
    {
      DATABASE_URL: urlFor(database),
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PROTOCOL_PER_MINUTE: unlimited,
      RATE_LIMIT_REST_PER_MINUTE: unlimited,
      RATE_LIMIT_PUBLIC_PER_MINUTE: unlimited,
    },
    join(__dirname, 'register.js'), // the benches' loader, as the in-process servers have (bench/register.js)
  );
  const base = server.baseUrl;
  try {
    const http = httpClient(base);

    const session = await http('/api/v1/console/signup', {
      method: 'POST',
      body: { organization_name: 'Load', email: 'load@example.test', password: 'correct horse battery staple' },
    });
    const agents: Array<{ handle: string; key: string }> = [];
    for (const handle of ['load-requester', 'load-worker']) {
      const created = await http('/api/v1/identities', {
        method: 'POST',
        token: session.body.token,
        body: {
          agent_handle: handle,
          mint_key: true,
          publicly_discoverable: true,
          description: 'Load test agent',
          skills: [{ id: 'work', name: 'Work', description: 'Does work', tags: ['load'] }],
        },
      });
      await http(`/api/v1/identities/${handle}/settings`, {
        method: 'PATCH',
        token: session.body.token,
        body: { enabled: true },
      });
      agents.push({ handle, key: created.body.api_key.key });
    }
    const [requester, worker] = agents;
    // A directory worth searching: 10,000 listed identities.
    const db = new Client({ connectionString: urlFor(database) });
    await db.connect();
    await db.query(
      `
      INSERT INTO identities (agent_handle, organization_id, claimed_at, enabled, publicly_discoverable, display_name, description)
      SELECT 'load-' || g, $1, now(), true, true, 'Agent ' || g, 'Translates documents, batch ' || (g % 100)
        FROM generate_series(1, 10000) g`,
      [session.body.user.organization_id],
    );
    // Ten thousand rows in one statement leave the planner's statistics behind until
    // autovacuum's next look (up to a minute): the run would measure plans made for an
    // empty table, which a directory that grew over time never sees.
    await db.query(`ANALYZE identities`);
    await db.end();

    const samples: Record<Op, number[]> = { send: [], reply: [], get: [], directory: [], card: [] };
    const errors: Record<Op, number> = { send: 0, reply: 0, get: 0, directory: 0, card: 0 };
    const open: string[] = [];
    const seen: string[] = [];
    const totalWeight = MIX.reduce((sum, [, w]) => sum + w, 0);
    const pickOp = (): Op => {
      let r = Math.random() * totalWeight;
      for (const [op, weight] of MIX) {
        if ((r -= weight) < 0) {
          return op;
        }
      }
      return 'send';
    };
    const perform = async (op: Op): Promise<boolean> => {
      switch (op) {
        case 'send': {
          const res = await http(`/a2a/${worker.handle}`, {
            method: 'POST',
            key: requester.key,
            body: {
              jsonrpc: '2.0',
              id: 1,
              method: 'message/send',
              params: {
                message: {
                  kind: 'message',
                  role: 'user',
                  messageId: randomUUID(),
                  parts: [{ kind: 'text', text: 'work' }],
                },
                configuration: { blocking: false },
              },
            },
          });
          if (res.status !== 200 || !res.body?.result?.id) {
            return false;
          }
          open.push(res.body.result.id);
          seen.push(res.body.result.id);
          return true;
        }
        case 'reply': {
          const id = open.shift();
          if (!id) {
            return perform('send');
          }
          const res = await http(`/api/v1/tasks/${id}/reply`, {
            method: 'POST',
            key: worker.key,
            body: { state: 'completed', message: { parts: [{ kind: 'text', text: 'done' }] } },
          });
          return res.status === 200;
        }
        case 'get': {
          const id = seen[Math.floor(Math.random() * seen.length)];
          if (!id) {
            return perform('send');
          }
          return (await http(`/api/v1/tasks/${id}`, { key: requester.key })).status === 200;
        }
        case 'directory': {
          const q = ['translates', 'batch', 'agent', 'documents'][Math.floor(Math.random() * 4)];
          return (await http(`/a2a/directory?q=${q}&limit=20`)).status === 200;
        }
        case 'card':
          return (await http(`/a2a/load-${1 + Math.floor(Math.random() * 10000)}/card`)).status === 200;
      }
    };

    const cpu = { server: cpuTimeMs(server.process.pid!), postgres: cpuTimeMs('postgres') };
    const started = Date.now();
    await Promise.all(
      Array.from({ length: users }, async () => {
        while (Date.now() - started < duration) {
          const op = pickOp();
          const t0 = process.hrtime.bigint();
          let ok = false;
          try {
            ok = await perform(op);
          } catch {
            ok = false;
          }
          samples[op].push(Number(process.hrtime.bigint() - t0) / 1e6);
          if (!ok) {
            errors[op] += 1;
          }
        }
      }),
    );
    const elapsed = (Date.now() - started) / 1000;

    const rows: Array<Record<string, string | number>> = MIX.map(([op]) => {
      const sorted = [...samples[op]].sort((a, b) => a - b);
      return {
        operation: op,
        'req/s': Math.round(sorted.length / elapsed),
        'p50 ms': percentile(sorted, 50),
        'p99 ms': percentile(sorted, 99),
        errors: errors[op],
      };
    });
    const all = MIX.flatMap(([op]) => samples[op]).sort((a, b) => a - b);
    rows.push({
      operation: 'all',
      'req/s': Math.round(all.length / elapsed),
      'p50 ms': percentile(all, 50),
      'p99 ms': percentile(all, 99),
      errors: Object.values(errors).reduce((a, b) => a + b, 0),
    });
    const perRequest = (used: number) => (used / all.length).toFixed(2);
    console.log(
      `${users} virtual users for ${elapsed.toFixed(0)} s; mix ${MIX.map(([op, w]) => `${op} ${w}%`).join(', ')}`,
    );
    console.log(
      `CPU per request: server process ${perRequest(cpuTimeMs(server.process.pid!) - cpu.server)} ms, PostgreSQL ${perRequest(cpuTimeMs('postgres') - cpu.postgres)} ms\n`,
    );
    table(rows);
  } finally {
    await server.stop();
    await dropDatabase(database);
  }
}
