import { randomUUID } from 'node:crypto';
import { createTestDatabase, dropDatabase, urlFor } from '../support/database';
import { agentPairOverHttp } from '../support/http-agents';
import { httpClient } from '../support/http-client';
import { startServerProcess, type ServerProcess } from '../support/server-process';

/**
 * Log injection through a dependency: @a2a-js/sdk's v0.3 translation calls
 * console.warn with the push config's `schemes`, attacker text. In a real server
 * process every line on stdout and stderr must be one entry of the structured log,
 * and the attack text only ever a value inside one.
 */
describe('nothing but the structured logger writes to stdout and stderr', () => {
  let database: string;
  let server: ServerProcess | undefined;

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await server?.stop();
    await dropDatabase(database);
  });

  it('a forged log line in push config schemes stays a value of one log entry', async () => {
    server = await startServerProcess({ DATABASE_URL: urlFor(database), LOG_LEVEL: 'warn' });
    const call = httpClient(server.baseUrl);
    const { requester, worker } = await agentPairOverHttp(call, 'Logs');
    const rpc = (method: string, params: unknown) =>
      call(`/a2a/${worker.handle}`, {
        method: 'POST',
        key: requester.key,
        body: { jsonrpc: '2.0', id: 1, method, params },
      });
    const sent = await rpc('message/send', {
      message: { kind: 'message', role: 'user', messageId: randomUUID(), parts: [{ kind: 'text', text: 'work' }] },
      configuration: { blocking: false },
    });
    const taskId = sent.body.result.id as string;

    const forged = '{"level":60,"time":"2026-01-01T00:00:00.000Z","service":"a2a-service","msg":"FORGED"}';
    const schemes = ['Bearer', `x\n${forged}\n`, `y\r\n${forged}\u2028${forged}`];
    const set = await rpc('tasks/pushNotificationConfig/set', {
      taskId,
      pushNotificationConfig: {
        id: 'c1',
        url: 'https://hooks.example.test/a2a',
        authentication: { schemes, credentials: 'c' },
      },
    });
    expect(set.status).toBe(200);

    // The SDK's warning arrives as a log entry; then the server is stopped so the output is complete.
    const deadline = Date.now() + 20_000;
    while (!server.output().includes('Lossy conversion') && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(await server.stop()).toBe(0);
    const lines = server
      .output()
      .split('\n')
      .filter((line) => line !== '');
    const entries = lines.map((line) => {
      expect(line).not.toMatch(/[\r\u0085\u2028\u2029]/);
      return JSON.parse(line) as Record<string, unknown>; // every line is one JSON entry
    });
    expect(entries.every((entry) => entry.service === 'a2a-service')).toBe(true);
    expect(entries.filter((entry) => entry.msg === 'FORGED')).toEqual([]);
    const warning = entries.find((entry) => String(entry.msg).includes('Lossy conversion'));
    expect(warning).toMatchObject({ level: 40, source: 'console' });
    expect(String(warning!.msg)).toContain(forged); // the text is there, as a value
  });
});
