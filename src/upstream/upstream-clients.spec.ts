import { createServer, type Server } from 'node:http';
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
    trust: { jwks: null, jwksUri: null },
    card: null,
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

/** Whether the upstream has the message turns on whether it answered the call, not on whether the call succeeded. */
describe('UpstreamClients.answered', () => {
  let server: Server;
  let port: number;
  /** The status of the next answer, and its body (never JSON). */
  let status = 200;
  let body = '{"jsonrpc": "2.0", "res';

  beforeAll(async () => {
    port = await freePort();
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(status, { 'content-type': 'application/json' }).end(body));
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const config = {
    webhooksAllowPrivateNetworks: true,
    upstream: { timeoutMs: 2_000, maxResponseBytes: 1_000_000 },
  } as AppConfig;
  const jsonRpc: UpstreamRecord = {
    identityId: 'identity-jsonrpc',
    url: `http://127.0.0.1:0/a2a`,
    cardUrl: null,
    protocolVersion: '1.0',
    binding: 'JSONRPC',
    streaming: false,
    auth: { type: 'none', header: null, value: null },
    trust: { jwks: null, jwksUri: null },
    card: null,
    createdAt: new Date(0),
    updatedAt: new Date(0),
  };
  const request = SendMessageRequest.fromJSON({
    message: { messageId: 'm-answered', role: 'ROLE_USER', parts: [{ text: 'hi' }] },
  });

  it.each([
    [200, true],
    [503, false],
  ])('a call answered HTTP %i with a body that cannot be read: answered %s', async (answer, answered) => {
    status = answer;
    const clients = new UpstreamClients(config);
    const client = await clients.of({ ...jsonRpc, url: `http://127.0.0.1:${port}/a2a` });
    const call = new AbortController();
    await expect(client.sendMessage(request, { signal: call.signal })).rejects.toThrow();
    expect(clients.answered(call.signal)).toBe(answered);
    expect(clients.answered(new AbortController().signal)).toBe(false);
  });

  it('a 2xx answer counts as answered even when its body breaks a limit before the client reads it', async () => {
    [status, body] = [200, `{"jsonrpc": "2.0", "result": "${'x'.repeat(1_000)}"}`];
    const clients = new UpstreamClients({ ...config, upstream: { ...config.upstream, maxResponseBytes: 100 } });
    // A2A 0.3: its JSON answers are read whole, to be repaired (upstream-tolerance.ts).
    const client = await clients.of({ ...jsonRpc, protocolVersion: '0.3', url: `http://127.0.0.1:${port}/a2a` });
    const call = new AbortController();
    await expect(client.sendMessage(request, { signal: call.signal })).rejects.toThrow('exceeded 100 bytes');
    expect(clients.answered(call.signal)).toBe(true);
    body = '{"jsonrpc": "2.0", "res';
  });

  it('a gRPC call whose response could not be decoded counts as answered; one never answered does not', () => {
    const clients = new UpstreamClients(config);
    const grpcError = (code: number, details: string) =>
      Object.assign(new Error(`gRPC error for sendMessage: ${code} ${details}`), {
        transport: 'grpc',
        cause: Object.assign(new Error(details), { code, details }),
      });
    const signal = new AbortController().signal;
    expect(clients.answered(signal, grpcError(13, 'Response message parsing error: index out of range'))).toBe(true);
    expect(clients.answered(signal, grpcError(14, 'No connection established'))).toBe(false);
  });
});
