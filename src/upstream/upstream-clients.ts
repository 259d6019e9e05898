import { AgentCard } from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransportFactory,
  RestTransportFactory,
  type Client,
  type TransportFactory,
} from '@a2a-js/sdk/client';
import { GrpcTransportFactory } from '@a2a-js/sdk/client/grpc';
import * as grpc from '@grpc/grpc-js';
import type { AppConfig } from '../config/config';
import { systemResolver, type HostResolver } from '../events/delivery-sender';
import { hostOf } from '../events/address-policy';
import { sendMessageAnswerGuard } from './grpc-answer-guard';
import { pinnedTarget } from './grpc-pinning';
import { answeredDespiteError, configuredUpstreamFetch, vetUpstream } from './upstream-fetch';
import { tolerantFetch } from './upstream-tolerance';
import type { UpstreamRecord } from './upstream.repository';

/**
 * One SDK client per upstream (rebuilt when the upstream changes), with the transport
 * of its binding: JSON-RPC or HTTP+JSON over upstreamFetch (vetted, pinned, no
 * redirects, limits) and tolerantFetch (the upstreams' known deviations), or gRPC —
 * whose host is vetted before every forward and whose channel is pinned to the vetted
 * address (grpc-pinning.ts; TLS for https, still checked against the host name,
 * plaintext only for http, which only WEBHOOKS_ALLOW_PRIVATE_NETWORKS allows), and
 * whose SendMessage answers are checked before the SDK converts them (grpc-answer-guard.ts).
 */
export class UpstreamClients {
  /** The calls whose upstream answered with a 2xx status, noted as its headers arrive (before any body is read). */
  private readonly answeredCalls = new WeakSet<AbortSignal>();
  private readonly fetch: typeof fetch;
  private readonly clients = new Map<string, { version: string; client: Promise<Client> }>();

  constructor(
    private readonly config: AppConfig,
    private readonly resolve: HostResolver = systemResolver,
  ) {
    const inner = configuredUpstreamFetch(config, resolve);
    const noted = (async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
      const response = await inner(input, init);
      if (response.ok && init?.signal) {
        this.answeredCalls.add(init.signal);
      }
      return response;
    }) as typeof fetch;
    // The deviations upstreams are known for, repaired in what they answer (upstream-tolerance.ts).
    this.fetch = tolerantFetch(noted);
  }

  /**
   * Whether the upstream answered the call, failed or not (`error`): a 2xx HTTP response,
   * or a gRPC response that could not be read (answeredDespiteError; an empty
   * SendMessageResponse is one, grpc-answer-guard.ts). Such an upstream has the message.
   */
  answered(call: AbortSignal, error?: unknown): boolean {
    return this.answeredCalls.has(call) || answeredDespiteError(error);
  }

  /** The client of an upstream, shared by its forwards. */
  async of(upstream: UpstreamRecord): Promise<Client> {
    const url = new URL(upstream.url);
    // gRPC: the channel is pinned to the address vetted now (grpc-pinning.ts), before every forward.
    let endpoint = upstream.url;
    if (upstream.binding === 'GRPC') {
      const vetted = await vetUpstream(url, {
        allowPrivateNetworks: this.config.webhooksAllowPrivateNetworks,
        resolve: this.resolve,
        timeoutMs: this.config.upstream.timeoutMs,
      });
      endpoint = pinnedTarget(hostOf(url), Number(url.port || (url.protocol === 'https:' ? 443 : 80)), vetted);
    }
    const version = upstream.updatedAt.toISOString();
    const cached = this.clients.get(upstream.identityId);
    if (cached?.version === version) {
      return cached.client;
    }
    const card = AgentCard.fromJSON({
      name: 'upstream',
      description: '',
      version: '1',
      supportedInterfaces: [
        { url: endpoint, protocolBinding: upstream.binding, protocolVersion: upstream.protocolVersion },
      ],
      capabilities: { streaming: upstream.streaming },
      defaultInputModes: [],
      defaultOutputModes: [],
      skills: [],
    });
    const legacyCompat = { enabled: true };
    const transports: Record<UpstreamRecord['binding'], () => TransportFactory> = {
      JSONRPC: () => new JsonRpcTransportFactory({ legacyCompat, fetchImpl: this.fetch }),
      'HTTP+JSON': () => new RestTransportFactory({ legacyCompat, fetchImpl: this.fetch }),
      GRPC: () =>
        new GrpcTransportFactory({
          legacyCompat,
          // An empty SendMessageResponse is a failed call, not an uncaught throw (grpc-answer-guard.ts).
          grpcCallOptions: { interceptors: [sendMessageAnswerGuard] },
          grpcChannelCredentials:
            url.protocol === 'https:' ? grpc.credentials.createSsl() : grpc.credentials.createInsecure(),
        }),
    };
    const factory = new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [transports[upstream.binding]()] }),
    );
    const client = factory.createFromAgentCard(card);
    this.clients.set(upstream.identityId, { version, client });
    client.catch(() => this.clients.delete(upstream.identityId));
    return client;
  }
}
