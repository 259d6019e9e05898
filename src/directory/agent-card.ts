import { createHash } from 'node:crypto';
import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { PageOf } from '../common/api-docs';
import { DEFAULT_SKILL_ID, shownSkills, type SkillAudience } from '../identities/card-skills';
import type { AgentSkill, Identity } from '../identities/identity.entity';

/**
 * The Agent Card, per A2A generation (docs/api.md §4).
 *
 * - v1.0: an A2A v1.0 AgentCard (proto JSON) with no v0.3-only field, valid against
 *   the v1.0 JSON schema.
 * - v0.3: the *hybrid* card that `@a2a-js/sdk`'s `agentCardHandler` with
 *   `legacyCompat` serves to a header-less or `A2A-Version: 0.3` request: the v0.3
 *   AgentCard (`url`, `preferredTransport`, `protocolVersion`, `additionalInterfaces`,
 *   OpenAPI-form `securitySchemes` with `security`,
 *   `supportsAuthenticatedExtendedCard`) plus the v1.0 `supportedInterfaces`.
 *
 * Both are built from one description of the agent, so they cannot disagree.
 * `signatures` are added by CardSigner, over each representation's own canonical form.
 */
export type CardGeneration = '1.0' | '0.3';

export type ProtocolBinding = 'JSONRPC' | 'HTTP+JSON' | 'GRPC';

/** A2A v1.0 AgentInterface. */
export interface AgentInterfaceJson {
  url: string;
  protocolBinding: ProtocolBinding;
  protocolVersion: '1.0' | '0.3';
  /** gRPC names the worker by tenant (the handle), as A2A v1.0 defines tenants. */
  tenant?: string;
}

export interface CardSkill {
  id: string;
  name: string;
  description: string;
  tags: string[];
  examples?: string[];
  inputModes?: string[];
  outputModes?: string[];
}

/** A2A AgentExtension, as this service declares them: no `params`, never `required`. */
export interface AgentExtensionJson {
  uri: string;
  description: string;
}

export interface CardSignature {
  protected: string;
  signature: string;
  header?: Record<string, unknown>;
}

/** OAuth flows of the `oauth2` scheme, the same JSON in both generations: client credentials (docs/api.md §17). */
export interface OAuthFlowsJson {
  clientCredentials: { tokenUrl: string; scopes: Record<string, string> };
}

/** A2A v1.0 AgentCard as served. */
export interface V1AgentCard {
  name: string;
  description: string;
  supportedInterfaces: AgentInterfaceJson[];
  provider: { url: string; organization: string };
  version: string;
  capabilities: {
    streaming: boolean;
    pushNotifications: boolean;
    extendedAgentCard: boolean;
    extensions: AgentExtensionJson[];
  };
  securitySchemes: {
    apiKey: { apiKeySecurityScheme: { location: 'header'; name: typeof API_KEY_HEADER } };
    oauth2: { oauth2SecurityScheme: { description: string; flows: OAuthFlowsJson; oauth2MetadataUrl: string } };
  };
  /** Alternatives: the key, or an access token for it (docs/api.md §17). */
  securityRequirements: Array<
    { schemes: { apiKey: { list?: string[] } } } | { schemes: { oauth2: { list: string[] } } }
  >;
  defaultInputModes: string[];
  defaultOutputModes: string[];
  skills: CardSkill[];
  signatures?: CardSignature[];
}

/** The v0.3 hybrid card: an A2A v0.3 AgentCard plus the v1.0 `supportedInterfaces`. */
export interface V03AgentCard {
  name: string;
  description: string;
  version: string;
  url: string;
  preferredTransport: ProtocolBinding;
  protocolVersion: '0.3.0';
  additionalInterfaces: Array<{ url: string; transport: ProtocolBinding }>;
  provider: { organization: string; url: string };
  capabilities: { streaming: boolean; pushNotifications: boolean; extensions: AgentExtensionJson[] };
  supportsAuthenticatedExtendedCard: boolean;
  securitySchemes: {
    apiKey: { type: 'apiKey'; in: 'header'; name: typeof API_KEY_HEADER };
    oauth2: { type: 'oauth2'; description: string; flows: OAuthFlowsJson; oauth2MetadataUrl: string };
  };
  security: Array<Record<'apiKey', string[]> | Record<'oauth2', string[]>>;
  defaultInputModes: string[];
  defaultOutputModes: string[];
  skills: CardSkill[];
  supportedInterfaces: AgentInterfaceJson[];
  signatures?: CardSignature[];
}

export type AgentCardJson = V1AgentCard | V03AgentCard;

const API_KEY_HEADER = 'X-API-Key';
const OAUTH2_DESCRIPTION =
  'An access token for an agent-scoped key: POST the key id and key to the token URL (client credentials), send the token as Authorization: Bearer.';

/** The `oauth2` scheme's flows: the service's token endpoint, the protocol's one scope (docs/api.md §17). */
function oauthFlows(baseUrl: string): OAuthFlowsJson {
  return {
    clientCredentials: {
      tokenUrl: `${baseUrl}/oauth/token`,
      scopes: { agent: 'Act as the agent identity of the key.' },
    },
  };
}

const oauthMetadataUrl = (baseUrl: string) => `${baseUrl}/.well-known/oauth-authorization-server`;
/** Every card's default input and output modes. */
export const MODES = ['text/plain', 'application/json'];

/**
 * Every interface (binding × generation) the service serves for one worker — the one
 * place that lists them. Bindings added to the service add their entries here; the
 * first entry is the preferred one (A2A v1.0), and the v0.3 card's `url` is the
 * first v0.3 entry.
 */
export function supportedInterfaces(
  baseUrl: string,
  handle: string,
  grpcAddress: string | null = null,
): AgentInterfaceJson[] {
  const url = `${baseUrl}/a2a/${handle}`;
  const versions = ['1.0', '0.3'] as const;
  return [
    ...versions.map((protocolVersion) => ({ url, protocolBinding: 'JSONRPC' as const, protocolVersion })),
    ...versions.map((protocolVersion) => ({
      url: `${url}/rest`,
      protocolBinding: 'HTTP+JSON' as const,
      protocolVersion,
    })),
    // gRPC (when on) names the worker by tenant, as A2A v1.0 defines tenants.
    ...(grpcAddress
      ? versions.map((protocolVersion) => ({
          url: grpcAddress,
          protocolBinding: 'GRPC' as const,
          protocolVersion,
          tenant: handle,
        }))
      : []),
  ];
}

/**
 * The extension that names the skill a message calls (docs/api.md §16): the skill's id
 * is the message's `metadata` entry under this URI. A2A has no field of its own for it
 * yet, so every card declares the extension, never as required (a call may name no skill).
 */
export function skillExtensionUri(baseUrl: string): string {
  return `${baseUrl}/extensions/skill/v1`;
}

function skillExtension(baseUrl: string): AgentExtensionJson {
  return {
    uri: skillExtensionUri(baseUrl),
    description: "Names the skill a message calls: the skill's id in the message's metadata under this URI.",
  };
}

export interface CardSubject {
  identity: Identity;
  organizationName: string;
  baseUrl: string;
  audience: SkillAudience;
  /** Of the `admitted` skills, those the extended card shows (the caller's admission to each); all when absent. */
  admits?: (skillId: string) => boolean;
  /** The gRPC address cards advertise; null while gRPC is off. */
  grpcAddress?: string | null;
}

/** The v1.0 card (unsigned). */
export function toV1Card({
  identity,
  organizationName,
  baseUrl,
  audience,
  admits,
  grpcAddress = null,
}: CardSubject): V1AgentCard {
  const name = identity.displayName || identity.agentHandle;
  const description = identity.description.trim() === '' ? defaultDescription(name) : identity.description;
  return {
    name,
    description,
    supportedInterfaces: supportedInterfaces(baseUrl, identity.agentHandle, grpcAddress),
    provider: { url: baseUrl, organization: organizationName },
    // card_version is bumped by every change of the card's content.
    version: String(identity.cardVersion),
    capabilities: {
      streaming: true,
      pushNotifications: true,
      extendedAgentCard: true,
      extensions: [skillExtension(baseUrl)],
    },
    securitySchemes: {
      apiKey: { apiKeySecurityScheme: { location: 'header', name: API_KEY_HEADER } },
      oauth2: {
        oauth2SecurityScheme: {
          description: OAUTH2_DESCRIPTION,
          flows: oauthFlows(baseUrl),
          oauth2MetadataUrl: oauthMetadataUrl(baseUrl),
        },
      },
    },
    // Either scheme (requirements are alternatives). The key has no scopes: the empty scope
    // list is left out, as the proto's JSON (which the bindings write) leaves it.
    securityRequirements: [{ schemes: { apiKey: {} } }, { schemes: { oauth2: { list: ['agent'] } } }],
    defaultInputModes: MODES,
    defaultOutputModes: MODES,
    skills: cardSkills(shownSkills(identity.skills, audience, admits), { name, description }),
  };
}

/** The v0.3 hybrid card (unsigned), derived from the v1.0 card as the SDK's compat layer does. */
export function toV03Card(v1: V1AgentCard): V03AgentCard {
  const legacy = v1.supportedInterfaces.filter((entry) => entry.protocolVersion === '0.3');
  const primary = legacy[0];
  return {
    name: v1.name,
    description: v1.description,
    version: v1.version,
    url: primary.url,
    preferredTransport: primary.protocolBinding,
    protocolVersion: '0.3.0',
    // v0.3 §5.6: it SHOULD include an entry matching the main url and preferredTransport.
    additionalInterfaces: legacy.map((entry) => ({ url: entry.url, transport: entry.protocolBinding })),
    provider: { organization: v1.provider.organization, url: v1.provider.url },
    capabilities: {
      streaming: v1.capabilities.streaming,
      pushNotifications: v1.capabilities.pushNotifications,
      extensions: v1.capabilities.extensions,
    },
    supportsAuthenticatedExtendedCard: v1.capabilities.extendedAgentCard,
    securitySchemes: {
      apiKey: { type: 'apiKey', in: 'header', name: API_KEY_HEADER },
      oauth2: { type: 'oauth2', ...v1.securitySchemes.oauth2.oauth2SecurityScheme },
    },
    security: [{ apiKey: [] }, { oauth2: ['agent'] }],
    defaultInputModes: v1.defaultInputModes,
    defaultOutputModes: v1.defaultOutputModes,
    skills: v1.skills,
    supportedInterfaces: v1.supportedInterfaces,
  };
}

export function toCard(subject: CardSubject, generation: CardGeneration): AgentCardJson {
  const v1 = toV1Card(subject);
  return generation === '1.0' ? v1 : toV03Card(v1);
}

/**
 * The skills a card shows (shownSkills), in the A2A shape (without this service's `visibility`).
 * A2A v1.0 §5.7: a REQUIRED array holds at least one element and a REQUIRED field is
 * present — and the protocol bindings write a card as its proto's JSON, which leaves out
 * an empty string or list, so an empty one would also change the card's shape from one
 * route to another. So a card always has a skill: an identity that shows this audience
 * none gets DEFAULT_SKILL_ID, the agent as a whole (its name and description); and a
 * skill always has a description (else its name) and a tag (else its id). These exist
 * on the card only (docs/api.md §4), not on the identity nor in the directory's search.
 */
function cardSkills(skills: ReadonlyArray<AgentSkill>, agent: { name: string; description: string }): CardSkill[] {
  const shown = skills.map(({ id, name, description, tags, examples, inputModes, outputModes }) => ({
    id,
    name,
    description: description.trim() === '' ? name : description,
    tags: tags.length > 0 ? [...tags] : [id],
    ...(examples !== undefined && examples.length > 0 ? { examples: [...examples] } : {}),
    ...(inputModes !== undefined && inputModes.length > 0 ? { inputModes: [...inputModes] } : {}),
    ...(outputModes !== undefined && outputModes.length > 0 ? { outputModes: [...outputModes] } : {}),
  }));
  return shown.length > 0
    ? shown
    : [{ id: DEFAULT_SKILL_ID, name: agent.name, description: agent.description, tags: [DEFAULT_SKILL_ID] }];
}

/** A card's description when the identity has none (A2A v1.0: REQUIRED, and left out when empty by the bindings). */
function defaultDescription(name: string): string {
  return `The agent ${name}, reached over A2A.`;
}

/**
 * Which card a request gets, as `@a2a-js/sdk`'s `agentCardHandler` with
 * `legacyCompat` decides: no (or an empty) `A2A-Version` → 0.3; a version in
 * [0.3, 1.0) → the v0.3 hybrid; anything else → the v1.0 card.
 */
export function cardGeneration(header: string | undefined): CardGeneration {
  const value = header?.trim() ?? '';
  if (value === '') {
    return '0.3';
  }
  const match = /^(\d+)(?:\.(\d+))?/.exec(value);
  if (!match) {
    return '1.0';
  }
  const [major, minor] = [Number(match[1]), Number(match[2] ?? 0)];
  return major === 0 && minor >= 3 ? '0.3' : '1.0';
}

/**
 * A strong ETag per representation: it covers the generation, the signing key and
 * the card's content — identity, card_version, organization name, base URL — so it
 * changes exactly when the served bytes do (signatures are deterministic per key and
 * content, see CardSigner).
 */
export function cardETag(unsigned: AgentCardJson, generation: CardGeneration, kid: string): string {
  const digest = createHash('sha256')
    .update(generation)
    .update('\0')
    .update(kid)
    .update('\0')
    .update(JSON.stringify(unsigned));
  return `"${digest.digest('base64url').slice(0, 27)}"`;
}

@ApiSchema({ name: 'AgentInterface' })
class CardInterfaceSchema {
  @ApiProperty({ format: 'uri' }) url: string;
  @ApiProperty({ enum: ['JSONRPC', 'HTTP+JSON', 'GRPC'] }) protocolBinding: ProtocolBinding;
  @ApiProperty({ enum: ['1.0', '0.3'] }) protocolVersion: '1.0' | '0.3';
  @ApiPropertyOptional({ description: "gRPC: the worker's handle, as the A2A tenant." }) tenant?: string;
}

@ApiSchema({ name: 'AgentProvider' })
class CardProviderSchema {
  @ApiProperty() organization: string;
  @ApiProperty({ format: 'uri' }) url: string;
}

@ApiSchema({ name: 'AgentExtension' })
class CardExtensionSchema implements AgentExtensionJson {
  @ApiProperty({ format: 'uri' }) uri: string;
  @ApiProperty() description: string;
}

@ApiSchema({ name: 'AgentCapabilities' })
class CardCapabilitiesSchema {
  @ApiProperty() streaming: boolean;
  @ApiProperty() pushNotifications: boolean;
  @ApiPropertyOptional({ description: 'A2A v1.0 cards.' }) extendedAgentCard?: boolean;
  @ApiProperty({
    type: [CardExtensionSchema],
    description: 'The skill extension: a message names the skill it calls (docs/api.md §16).',
  })
  extensions: AgentExtensionJson[];
}

@ApiSchema({ name: 'AgentCardSkill' })
class CardSkillSchema implements CardSkill {
  @ApiProperty() id: string;
  @ApiProperty() name: string;
  @ApiProperty() description: string;
  @ApiProperty({ type: [String] }) tags: string[];
  @ApiPropertyOptional({ type: [String] }) examples?: string[];
}

/**
 * The OpenAPI schema of the Agent Card: `A2A-Version: 1.0` gets the v1.0 AgentCard,
 * otherwise the v0.3 hybrid; the fields of one generation only are optional here.
 */
@ApiSchema({ name: 'AgentCard' })
export class AgentCardSchema {
  @ApiProperty() name: string;
  @ApiProperty() description: string;
  @ApiProperty() version: string;
  @ApiProperty({ type: [CardInterfaceSchema] }) supportedInterfaces: AgentInterfaceJson[];
  @ApiProperty({ type: CardProviderSchema }) provider: V1AgentCard['provider'];
  @ApiProperty({ type: CardCapabilitiesSchema }) capabilities: V03AgentCard['capabilities'];
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description:
      "The X-API-Key scheme and the OAuth 2.0 client credentials scheme (docs/api.md §17), in the generation's form.",
  })
  securitySchemes: AgentCardJson['securitySchemes'];
  @ApiPropertyOptional({
    type: 'array',
    items: { type: 'object', additionalProperties: true },
    description: 'A2A v1.0 cards.',
  })
  securityRequirements?: V1AgentCard['securityRequirements'];
  @ApiProperty({ type: [String] }) defaultInputModes: string[];
  @ApiProperty({ type: [String] }) defaultOutputModes: string[];
  @ApiProperty({ type: [CardSkillSchema] }) skills: CardSkill[];
  @ApiPropertyOptional({
    type: 'array',
    items: { type: 'object', additionalProperties: true },
    description: 'JWS signatures (A2A v1.0 §8.4).',
  })
  signatures?: CardSignature[];
  @ApiPropertyOptional({ format: 'uri', description: 'A2A v0.3: the preferred endpoint.' }) url?: string;
  @ApiPropertyOptional({ enum: ['0.3.0'] }) protocolVersion?: '0.3.0';
  @ApiPropertyOptional({ enum: ['JSONRPC', 'HTTP+JSON', 'GRPC'] }) preferredTransport?: ProtocolBinding;
  @ApiPropertyOptional({ type: 'array', items: { type: 'object', additionalProperties: true } })
  additionalInterfaces?: V03AgentCard['additionalInterfaces'];
  @ApiPropertyOptional() supportsAuthenticatedExtendedCard?: boolean;
  @ApiPropertyOptional({ type: 'array', items: { type: 'object', additionalProperties: true } })
  security?: V03AgentCard['security'];
}

@ApiSchema({ name: 'PublicDirectoryEntry' })
class DirectoryEntrySchema {
  @ApiProperty() agent_handle: string;
  @ApiProperty({
    enum: ['available', 'unavailable'],
    description:
      '`unavailable`: its upstream failed its last forward attempts, or a task has waited too long for its first answer (docs/api.md §4, Availability).',
  })
  availability: 'available' | 'unavailable';
  @ApiProperty({ type: AgentCardSchema }) card: AgentCardJson;
}

export const PublicDirectoryPage = PageOf(DirectoryEntrySchema, 'agents', 'PublicDirectory');
