import { randomUUID } from 'node:crypto';
import { SendMessageRequest, type AgentCard } from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
  type Client,
  type TransportFactory,
} from '@a2a-js/sdk/client';
import { GrpcTransportFactory } from '@a2a-js/sdk/client/grpc';
import type { Agent } from './a2a';
import { startAppAtOwnAddress, type TestApp } from './app';

/**
 * What the official `@a2a-js/sdk` client makes of an Agent Card URL: the card its
 * DefaultAgentCardResolver resolves, and the transport and endpoint ClientFactory
 * picks from it, over real HTTP.
 */
export interface SdkResolution {
  card: Record<string, unknown>;
  transport: string;
  endpoint: string;
}

/** `path` as the SDK takes it: omitted → `.well-known/agent-card.json` relative to `url`; '' → `url` itself. */
export async function resolveWithSdk(url: string, path?: string): Promise<SdkResolution> {
  const card = await new DefaultAgentCardResolver().resolve(url, path);
  const client = await new ClientFactory().createFromUrl(url, path);
  const transport = client.transport as unknown as { constructor: { name: string }; endpoint: string };
  return {
    card: card as unknown as Record<string, unknown>,
    transport: transport.constructor.name,
    endpoint: transport.endpoint,
  };
}

export type Binding = 'JSONRPC' | 'HTTP+JSON' | 'GRPC';

/** Every binding in both generations, as the service's cards offer them. */
export const EVERY_BINDING = [
  ['JSONRPC', '1.0'],
  ['JSONRPC', '0.3'],
  ['HTTP+JSON', '1.0'],
  ['HTTP+JSON', '0.3'],
  ['GRPC', '1.0'],
  ['GRPC', '0.3'],
] as const satisfies ReadonlyArray<readonly [Binding, '1.0' | '0.3']>;

/**
 * The application with its cards pointing at itself — PUBLIC_BASE_URL and the gRPC
 * address are this server's own — so that a client created from a served card
 * (sdkClient) reaches it.
 */
export function startAppForCards(env: Record<string, string> = {}): Promise<TestApp> {
  return startAppAtOwnAddress(env, { grpc: true });
}

/**
 * Adds the agent's credential to every call (`X-API-Key`, or `Authorization: Bearer` with
 * an access token: an HTTP header, or gRPC metadata), and for v0.3 gRPC the worker as `a2a-tenant`.
 */
class CallerInterceptor {
  constructor(private readonly parameters: Record<string, string>) {}

  async before(args: { options?: { serviceParameters?: Record<string, string> } }): Promise<void> {
    args.options = { ...args.options, serviceParameters: { ...args.options?.serviceParameters, ...this.parameters } };
  }

  async after(): Promise<void> {}
}

const FACTORIES: Record<Binding, () => TransportFactory> = {
  JSONRPC: () => new JsonRpcTransportFactory({ legacyCompat: { enabled: true } }),
  'HTTP+JSON': () => new RestTransportFactory({ legacyCompat: { enabled: true } }),
  GRPC: () => new GrpcTransportFactory({ legacyCompat: { enabled: true } }),
};

const TRANSPORTS: Record<Binding, Record<'1.0' | '0.3', string>> = {
  JSONRPC: { '1.0': 'JsonRpcTransport', '0.3': 'LegacyJsonRpcTransport' },
  'HTTP+JSON': { '1.0': 'RestTransport', '0.3': 'LegacyRestTransport' },
  GRPC: { '1.0': 'GrpcTransport', '0.3': 'LegacyGrpcTransport' },
};

/**
 * The official client with one transport factory, created from the worker's card as
 * served, seeing only that binding's interface of one generation (the SDK would
 * otherwise prefer 1.0). It calls with the requester's key, or with `bearer`: an access
 * token for it (docs/api.md §17).
 */
export async function sdkClient(
  t: TestApp,
  requester: Agent,
  worker: Agent,
  binding: Binding,
  version: '1.0' | '0.3',
  bearer?: string,
): Promise<{ client: Client; card: AgentCard }> {
  const resolver = new DefaultAgentCardResolver();
  let card!: AgentCard;
  const parameters: Record<string, string> =
    bearer === undefined ? { 'X-API-Key': requester.key } : { authorization: `Bearer ${bearer}` };
  if (binding === 'GRPC' && version === '0.3') {
    parameters['a2a-tenant'] = worker.handle;
  }
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [FACTORIES[binding]()],
      clientConfig: { interceptors: [new CallerInterceptor(parameters)] },
      cardResolver: {
        resolve: async (url, path) => {
          const served = await resolver.resolve(url, path);
          card = {
            ...served,
            supportedInterfaces: served.supportedInterfaces.filter(
              (i) => i.protocolBinding === binding && i.protocolVersion === version,
            ),
          };
          return card;
        },
      },
    }),
  );
  const client = await factory.createFromUrl(`${t.baseUrl}/a2a/${worker.handle}/card`, '');
  expect(client.protocolVersion).toBe(version);
  // The transport of that binding and generation, at the advertised endpoint (a tenant decorator wraps gRPC 1.0's).
  const transport = client.transport as unknown as { base?: { endpoint: string }; endpoint: string };
  expect((transport.base ?? transport).constructor.name.replace(/^_/, '')).toBe(TRANSPORTS[binding][version]);
  if (binding !== 'GRPC') {
    expect((transport.base ?? transport).endpoint).toBe(card.supportedInterfaces[0].url);
  }
  return { client, card };
}

/** A user message as the SDK sends it. */
export const say = (text: string, extra: { taskId?: string; contextId?: string } = {}) =>
  SendMessageRequest.fromJSON({ message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }], ...extra } });
