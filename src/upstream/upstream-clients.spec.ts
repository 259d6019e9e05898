import { SendMessageRequest, TaskState, type Task } from '@a2a-js/sdk';
import type { AppConfig } from '../config/config';
import { freePort } from '../../test/support/server-process';
import { startUpstreamAgent, type UpstreamAgent } from '../../test/support/upstream-agent';
import { UpstreamClients } from './upstream-clients';
import type { UpstreamRecord } from './upstream.repository';

/**
 * A gRPC upstream's channel connects to the address the forwarder vetted, never to
 * what the channel would resolve on its own: here the name resolves only through the
 * forwarder's resolver (the system's knows nothing of it).
 */
describe('UpstreamClients over gRPC', () => {
  let agent: UpstreamAgent;
  let grpcPort: number;

  beforeAll(async () => {
    grpcPort = await freePort();
    agent = await startUpstreamAgent(await freePort(), { binding: 'GRPC', grpcPort });
  });
  afterAll(() => agent.close());

  const config = {
    webhooksAllowPrivateNetworks: true,
    upstream: { timeoutMs: 2_000, maxResponseBytes: 1_000_000 },
  } as AppConfig;
  const record = (host: string): UpstreamRecord => ({
    identityId: `identity-${host}`,
    url: `http://${host}:${grpcPort}/`,
    cardUrl: null,
    protocolVersion: '1.0',
    binding: 'GRPC',
    streaming: false,
    auth: { type: 'none', header: null, value: null },
    createdAt: new Date(0),
    updatedAt: new Date(0),
  });
  const say = (text: string) =>
    SendMessageRequest.fromJSON({ message: { messageId: `m-${text}`, role: 'ROLE_USER', parts: [{ text }] } });

  it('pins the channel to the vetted address', async () => {
    const resolved: string[] = [];
    const clients = new UpstreamClients(config, async (host) => {
      resolved.push(host);
      return [{ address: '127.0.0.1', family: 4 }];
    });
    const client = await clients.of(record('upstream.test'));
    const task = (await client.sendMessage(say('pinned'))) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(agent.received.map((r) => r.text)).toContain('pinned');
    expect(resolved).toEqual(['upstream.test']);
  });

  it('refuses a name whose address the policy refuses, without calling it', async () => {
    const clients = new UpstreamClients({ ...config, webhooksAllowPrivateNetworks: false }, async () => [
      { address: '127.0.0.1', family: 4 },
    ]);
    await expect(clients.of({ ...record('upstream.test'), url: `https://upstream.test:${grpcPort}/` })).rejects.toThrow(
      'its host name does not resolve to an allowed address',
    );
  });
});
