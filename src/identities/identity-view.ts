import type { KeyMetadata } from '../keys/key-metadata';
import type { AgentSkill, FilterMode, Identity, IdentityStatus } from './identity.entity';

/** An identity as every REST read returns it (CONTRACT §3). Never the claim code hash. */
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
}

/** A freshly minted key: its metadata and, this once, the plaintext. */
export type MintedKeyView = KeyMetadata & { key: string };

/**
 * Skills in one shape and key order (jsonb stores keys in its own order), so that
 * copies compare equal when they mean the same and read as the A2A spec lists them.
 */
export function canonicalSkills(skills: ReadonlyArray<AgentSkill>): AgentSkill[] {
  return skills.map(({ id, name, description, tags, examples, visibility }) => ({
    id, name, description, tags: [...tags], ...(examples !== undefined ? { examples: [...examples] } : {}),
    visibility: visibility ?? 'public',
  }));
}

/** The direct card URL, served whatever the directory visibility (SEED-SPEC §5 rule 3). */
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
  };
}
