import { createHash } from 'node:crypto';
import { canonicalSkills } from '../identities/identity-view';
import type { AgentSkill, Identity } from '../identities/identity.entity';

/**
 * The Agent Card as served (CONTRACT §4): an A2A v1.0 AgentCard (proto JSON), plus
 * the v0.3 fields `url`, `protocolVersion` and `preferredTransport`, so clients of
 * either generation can use it. Both generations speak JSON-RPC on one URL; the
 * `A2A-Version` request header picks the method names.
 */
export interface AgentCardJson {
  name: string;
  description: string;
  version: string;
  supportedInterfaces: AgentInterfaceJson[];
  provider: { organization: string; url: string };
  capabilities: { streaming: boolean; pushNotifications: boolean };
  securitySchemes: { apiKey: { apiKeySecurityScheme: { location: 'header'; name: 'X-API-Key' } } };
  securityRequirements: Array<{ schemes: { apiKey: { list: string[] } } }>;
  defaultInputModes: string[];
  defaultOutputModes: string[];
  skills: AgentSkill[];
  url: string;
  protocolVersion: '0.3.0';
  preferredTransport: 'JSONRPC';
}

export interface AgentInterfaceJson {
  url: string;
  protocolBinding: 'JSONRPC' | 'HTTP+JSON' | 'GRPC';
  protocolVersion: '1.0' | '0.3';
  tenant?: string;
}

const MODES = ['text/plain', 'application/json'];

/**
 * Every binding the service serves (CONTRACT §5), each in both generations:
 * JSON-RPC at the agent's URL, HTTP+JSON under `{url}/rest`, gRPC at the service's
 * gRPC address with the handle as the tenant (when gRPC is on).
 */
export function protocolInterfaces(url: string, handle: string, grpcAddress: string | null): AgentInterfaceJson[] {
  const versions = ['1.0', '0.3'] as const;
  return [
    ...versions.map((protocolVersion) => ({ url, protocolBinding: 'JSONRPC' as const, protocolVersion })),
    ...versions.map((protocolVersion) => ({ url: `${url}/rest`, protocolBinding: 'HTTP+JSON' as const, protocolVersion })),
    ...(grpcAddress ? versions.map((protocolVersion) => ({ url: grpcAddress, protocolBinding: 'GRPC' as const, protocolVersion, tenant: handle })) : []),
  ];
}

export function toAgentCard(identity: Identity, organizationName: string, baseUrl: string, grpcAddress: string | null = null): AgentCardJson {
  const url = `${baseUrl}/a2a/${identity.agentHandle}`;
  return {
    name: identity.displayName || identity.agentHandle,
    description: identity.description,
    // card_version is bumped by every change of the card's content.
    version: String(identity.cardVersion),
    supportedInterfaces: protocolInterfaces(url, identity.agentHandle, grpcAddress),
    provider: { organization: organizationName, url: baseUrl },
    capabilities: { streaming: true, pushNotifications: true },
    securitySchemes: { apiKey: { apiKeySecurityScheme: { location: 'header', name: 'X-API-Key' } } },
    securityRequirements: [{ schemes: { apiKey: { list: [] } } }],
    defaultInputModes: MODES,
    defaultOutputModes: MODES,
    skills: canonicalSkills(identity.skills),
    url,
    protocolVersion: '0.3.0',
    preferredTransport: 'JSONRPC',
  };
}

/**
 * A strong ETag over the card's content. It covers everything the card is made
 * of — identity, card_version, organization name, base URL — so it changes exactly
 * when the card does, with no bookkeeping that could drift.
 */
export function cardETag(card: AgentCardJson): string {
  return `"${createHash('sha256').update(JSON.stringify(card)).digest('base64url').slice(0, 27)}"`;
}
