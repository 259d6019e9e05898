import { randomUUID } from 'node:crypto';
import { SendMessageRequest } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import { freePort } from '../test/support/server-process';
import { startUpstreamAgent } from '../test/support/upstream-agent';
import { startBenchServer, table, timeInTurns, TURN } from './lib';
import { agentPair } from './protocol.bench';

/**
 * Issue 15: forwarding overhead. The same official SDK client sends a blocking message
 * (the echo agent answers working → artifact → completed) once straight to the
 * upstream agent, once through the service to a bridged identity whose upstream is that
 * agent: authentication, admission, the ledger, the queue, the forwarder's own SDK
 * client (streaming), and every event written back through the journal. One send at a
 * time; the direct path first, then the bridged one.
 */
export async function run(): Promise<void> {
  const iterations = Number(process.env.BENCH_ITERATIONS ?? 300);
  const upstream = await startUpstreamAgent(await freePort());
  const server = await startBenchServer({ WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true', EVENTS_POLL_INTERVAL_MS: '1000' });
  try {
    const { requester, worker } = await agentPair(server.baseUrl, server.db, 'bridge');
    const [{ id: workerId }] = (await server.db.query(`SELECT id FROM identities WHERE agent_handle = $1`, [
      worker.handle,
    ])) as Array<{ id: string }>;
    await server.db.query(
      `INSERT INTO identity_upstreams (identity_id, url, protocol_version, binding, streaming) VALUES ($1, $2, '1.0', 'JSONRPC', true)`,
      [workerId, upstream.url],
    );
    const client = async (url: string, headers: Record<string, string>): Promise<Client> => {
      const factory = new ClientFactory(
        ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
          transports: [
            new JsonRpcTransportFactory({
              fetchImpl: (input, init) =>
                fetch(input, { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers)), ...headers } }),
            }),
          ],
        }),
      );
      return factory.createFromAgentCard({
        name: 'bench',
        description: '',
        version: '1',
        supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' }],
        capabilities: { streaming: true, pushNotifications: false, extensions: [] },
        defaultInputModes: [],
        defaultOutputModes: [],
        skills: [],
        securitySchemes: {},
        securityRequirements: [],
        signatures: [],
        provider: undefined,
        documentationUrl: '',
        iconUrl: '',
      } as never);
    };
    const direct = await client(upstream.url, {});
    const bridged = await client(`${server.baseUrl}/a2a/${worker.handle}`, { 'x-api-key': requester.key });
    const say = () =>
      SendMessageRequest.fromJSON({
        message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'bench' }] },
      });
    const send = async (c: Client) => {
      const task = (await c.sendMessage(say())) as { status?: { state: number } };
      if (task.status?.state !== 3) {
        throw new Error(`not completed: ${JSON.stringify(task.status)}`);
      } // TASK_STATE_COMPLETED
    };
    const { direct: directTimes, bridged: bridgedTimes } = await timeInTurns(iterations, {
      direct: () => send(direct),
      bridged: () => send(bridged),
    });
    console.log(
      `Blocking send → completed, one at a time, ${iterations} sends per path (after 50 warm-up sends), ` +
        `the two paths in turns of ${TURN}.\n`,
    );
    table([
      {
        path: 'SDK client → upstream agent',
        'p50 ms': directTimes.p50,
        'p99 ms': directTimes.p99,
        'mean ms': directTimes.mean,
      },
      {
        path: 'SDK client → service → forwarder → upstream agent',
        'p50 ms': bridgedTimes.p50,
        'p99 ms': bridgedTimes.p99,
        'mean ms': bridgedTimes.mean,
      },
      {
        path: 'added by the service',
        'p50 ms': bridgedTimes.p50 - directTimes.p50,
        'p99 ms': bridgedTimes.p99 - directTimes.p99,
        'mean ms': bridgedTimes.mean - directTimes.mean,
      },
    ]);
  } finally {
    await server.close();
    await upstream.close();
  }
}
