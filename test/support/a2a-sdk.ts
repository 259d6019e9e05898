import { ClientFactory, DefaultAgentCardResolver } from '@a2a-js/sdk/client';

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

/** A client interceptor that sends the agent's key with every call (`X-API-Key`, as the card asks). */
export function apiKeyInterceptor(key: string) {
  return {
    before: async (args: { options?: { serviceParameters?: Record<string, string> } }) => {
      args.options = { ...args.options, serviceParameters: { ...args.options?.serviceParameters, 'X-API-Key': key } };
    },
    after: async () => undefined,
  };
}
