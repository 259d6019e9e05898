import { createHash } from 'node:crypto';
import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { PageOf } from '../common/api-docs';
import { AgentSkillDto } from '../identities/dto/agent-skill.dto';
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
  supportedInterfaces: Array<{ url: string; protocolBinding: 'JSONRPC'; protocolVersion: '1.0' | '0.3' }>;
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

const MODES = ['text/plain', 'application/json'];

export function toAgentCard(identity: Identity, organizationName: string, baseUrl: string): AgentCardJson {
  const url = `${baseUrl}/a2a/${identity.agentHandle}`;
  return {
    name: identity.displayName || identity.agentHandle,
    description: identity.description,
    // card_version is bumped by every change of the card's content.
    version: String(identity.cardVersion),
    supportedInterfaces: [
      { url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
    ],
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

@ApiSchema({ name: 'AgentInterface' })
class CardInterfaceSchema {
  @ApiProperty({ format: 'uri' }) url: string;
  @ApiProperty({ enum: ['JSONRPC'] }) protocolBinding: 'JSONRPC';
  @ApiProperty({ enum: ['1.0', '0.3'] }) protocolVersion: '1.0' | '0.3';
}

@ApiSchema({ name: 'AgentProvider' })
class CardProviderSchema {
  @ApiProperty() organization: string;
  @ApiProperty({ format: 'uri' }) url: string;
}

@ApiSchema({ name: 'AgentCapabilities' })
class CardCapabilitiesSchema {
  @ApiProperty() streaming: boolean;
  @ApiProperty() pushNotifications: boolean;
}

/** The OpenAPI schema of the Agent Card (A2A v1.0 AgentCard plus the v0.3 fields). */
@ApiSchema({ name: 'AgentCard' })
export class AgentCardSchema implements AgentCardJson {
  @ApiProperty() name: string;
  @ApiProperty() description: string;
  @ApiProperty() version: string;
  @ApiProperty({ type: [CardInterfaceSchema] }) supportedInterfaces: AgentCardJson['supportedInterfaces'];
  @ApiProperty({ type: CardProviderSchema }) provider: AgentCardJson['provider'];
  @ApiProperty({ type: CardCapabilitiesSchema }) capabilities: AgentCardJson['capabilities'];
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'The X-API-Key scheme (A2A v1.0 form).' })
  securitySchemes: AgentCardJson['securitySchemes'];
  @ApiProperty({ type: 'array', items: { type: 'object', additionalProperties: true } })
  securityRequirements: AgentCardJson['securityRequirements'];
  @ApiProperty({ type: [String] }) defaultInputModes: string[];
  @ApiProperty({ type: [String] }) defaultOutputModes: string[];
  @ApiProperty({ type: [AgentSkillDto] }) skills: AgentSkill[];
  @ApiProperty({ format: 'uri', description: 'A2A v0.3: the JSON-RPC endpoint.' }) url: string;
  @ApiProperty({ enum: ['0.3.0'] }) protocolVersion: '0.3.0';
  @ApiProperty({ enum: ['JSONRPC'] }) preferredTransport: 'JSONRPC';
}

@ApiSchema({ name: 'PublicDirectoryEntry' })
class DirectoryEntrySchema {
  @ApiProperty() agent_handle: string;
  @ApiProperty({ type: AgentCardSchema }) card: AgentCardJson;
}

export const PublicDirectoryPage = PageOf(DirectoryEntrySchema, 'agents', 'PublicDirectory');
