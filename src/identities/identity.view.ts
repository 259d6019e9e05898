import { decimal } from '../common/money';
import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { PageOf } from '../common/api-docs';
import { MintedKeySchema } from '../keys/key-metadata';
import { AgentSkillDto } from './dto/agent-skill.dto';
import type { KeyMetadata } from '../keys/key-metadata';
import type { AgentSkill, FilterMode, Identity, IdentityStatus } from './identity.entity';
import { FILTER_MODES } from './identity.entity';

/** An identity as every REST read returns it (docs/api.md §3). Never the claim code hash. */
export interface IdentityView {
  id: string;
  agent_handle: string;
  organization_id: string | null;
  display_name: string;
  description: string;
  skills: AgentSkill[];
  claimed: boolean;
  claimed_at: string | null;
  enabled: boolean;
  publicly_discoverable: boolean;
  allow_public_egress: boolean;
  filter_mode: FilterMode;
  require_skill: boolean;
  status: IdentityStatus;
  card_url: string;
  created_at: string;
  updated_at: string;
}

export interface SettingsView {
  enabled: boolean;
  allow_public_egress: boolean;
  publicly_discoverable: boolean;
  filter_mode: FilterMode;
  require_skill: boolean;
  daily_task_quota: number | null;
  monthly_cost_budget: { amount: string; currency: string } | null;
}

/** A freshly minted key: its metadata and, this once, the plaintext. */
export type MintedKeyView = KeyMetadata & { key: string };

/**
 * Skills in one shape and key order (jsonb stores keys in its own order), so that
 * copies compare equal when they mean the same and read as the A2A spec lists them.
 */
export function canonicalSkills(skills: ReadonlyArray<AgentSkill>): AgentSkill[] {
  return skills.map(({ id, name, description, tags, examples, inputModes, outputModes, visibility }) => ({
    id,
    name,
    description,
    tags: [...tags],
    ...(examples !== undefined ? { examples: [...examples] } : {}),
    ...(inputModes !== undefined ? { inputModes: [...inputModes] } : {}),
    ...(outputModes !== undefined ? { outputModes: [...outputModes] } : {}),
    visibility: visibility ?? 'public',
  }));
}

/** The direct card URL, served whatever the directory visibility (docs/api.md §4: a card is served while its identity is claimed, enabled and not deleted). */
export const cardUrl = (baseUrl: string, handle: string) => `${baseUrl}/a2a/${handle}/card`;

export function toIdentityView(identity: Identity, baseUrl: string): IdentityView {
  return {
    id: identity.id,
    agent_handle: identity.agentHandle,
    organization_id: identity.organizationId,
    display_name: identity.displayName,
    description: identity.description,
    skills: canonicalSkills(identity.skills),
    claimed: identity.claimed,
    claimed_at: identity.claimedAt?.toISOString() ?? null,
    enabled: identity.enabled,
    publicly_discoverable: identity.publiclyDiscoverable,
    allow_public_egress: identity.allowPublicEgress,
    filter_mode: identity.filterMode,
    require_skill: identity.requireSkill,
    status: identity.status,
    card_url: cardUrl(baseUrl, identity.agentHandle),
    created_at: identity.createdAt.toISOString(),
    updated_at: identity.updatedAt.toISOString(),
  };
}

export function toSettingsView(identity: Identity): SettingsView {
  return {
    enabled: identity.enabled,
    allow_public_egress: identity.allowPublicEgress,
    publicly_discoverable: identity.publiclyDiscoverable,
    filter_mode: identity.filterMode,
    require_skill: identity.requireSkill,
    daily_task_quota: identity.dailyTaskQuota,
    monthly_cost_budget:
      identity.monthlyCostBudgetAmount === null
        ? null
        : { amount: decimal(identity.monthlyCostBudgetAmount), currency: identity.monthlyCostBudgetCurrency! },
  };
}

/** The OpenAPI schema of IdentityView (it must list every field the mapper returns). */
@ApiSchema({ name: 'Identity' })
export class IdentitySchema implements IdentityView {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ example: 'acme-billing' }) agent_handle: string;
  @ApiProperty({ type: String, format: 'uuid', nullable: true, description: 'null while unclaimed.' }) organization_id:
    string | null;
  @ApiProperty() display_name: string;
  @ApiProperty() description: string;
  @ApiProperty({ type: [AgentSkillDto] }) skills: AgentSkill[];
  @ApiProperty() claimed: boolean;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) claimed_at: string | null;
  @ApiProperty({ description: 'Whether its receiver accepts work (and its card is served).' }) enabled: boolean;
  @ApiProperty() publicly_discoverable: boolean;
  @ApiProperty() allow_public_egress: boolean;
  @ApiProperty({ enum: FILTER_MODES }) filter_mode: FilterMode;
  @ApiProperty({ description: 'Every message sent to it must name a skill of its card (docs/api.md §16).' })
  require_skill: boolean;
  @ApiProperty({ enum: ['active', 'deleted'] }) status: IdentityStatus;
  @ApiProperty({ format: 'uri' }) card_url: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
}

@ApiSchema({ name: 'Money' })
export class MoneySchema {
  @ApiProperty({ example: '12.5' }) amount: string;
  @ApiProperty({ example: 'USD' }) currency: string;
}

@ApiSchema({ name: 'IdentitySettings' })
export class SettingsSchema implements SettingsView {
  @ApiProperty() enabled: boolean;
  @ApiProperty() allow_public_egress: boolean;
  @ApiProperty() publicly_discoverable: boolean;
  @ApiProperty({ enum: FILTER_MODES }) filter_mode: FilterMode;
  @ApiProperty({ description: 'Every message sent to it must name a skill of its card (docs/api.md §16).' })
  require_skill: boolean;
  @ApiProperty({ type: Number, nullable: true, description: 'Tasks it may start per UTC day (docs/api.md §18).' })
  daily_task_quota: number | null;
  @ApiProperty({ type: MoneySchema, nullable: true, description: 'Reported cost it may incur per UTC month.' })
  monthly_cost_budget: MoneySchema | null;
}

/** A new identity; with `mint_key`, its first agent key (plaintext shown only here). */
@ApiSchema({ name: 'CreatedIdentity' })
export class CreatedIdentitySchema extends IdentitySchema {
  @ApiPropertyOptional({ type: MintedKeySchema, description: 'Only with `mint_key: true`.' }) api_key?: MintedKeyView;
}

@ApiSchema({ name: 'ClaimCode' })
class ClaimCodeSchema {
  @ApiProperty({
    description: 'Give it to a Console user of the organization that should claim the agent. Shown only here.',
  })
  code: string;
  @ApiProperty({ format: 'date-time' }) expires_at: string;
}

/** Agent signup: the unclaimed identity, its key and its claim code, each shown only here. */
@ApiSchema({ name: 'AgentSignup' })
export class AgentSignupSchema {
  @ApiProperty({ type: IdentitySchema }) identity: IdentityView;
  @ApiProperty({ type: MintedKeySchema }) api_key: MintedKeyView;
  @ApiProperty({ type: ClaimCodeSchema }) claim: { code: string; expires_at: string };
}

export const IdentityPage = PageOf(IdentitySchema, 'identities', 'IdentityList');
