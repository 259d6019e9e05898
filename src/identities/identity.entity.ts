import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

export const FILTER_MODES = ['whitelist', 'blacklist'] as const;
export type FilterMode = (typeof FILTER_MODES)[number];
export type IdentityStatus = 'active' | 'deleted';

export const SKILL_VISIBILITIES = ['public', 'admitted'] as const;
export type SkillVisibility = (typeof SKILL_VISIBILITIES)[number];

/**
 * A2A AgentSkill, as stored, plus this service's `visibility` (CONTRACT §3): `public`
 * skills are on the public card, `admitted` ones only on the extended card. Rows
 * written before visibility existed have none: public.
 */
export interface AgentSkill {
  id: string;
  name: string;
  description: string;
  tags: string[];
  examples?: string[];
  visibility?: SkillVisibility;
}

@Entity({ name: 'identities' })
export class Identity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'agent_handle', type: 'varchar' })
  agentHandle: string;

  /** Null while unclaimed (agent signup); set when claimed into an organization. */
  @Column({ name: 'organization_id', type: 'uuid', nullable: true })
  organizationId: string | null;

  @Column({ name: 'display_name', type: 'varchar' })
  displayName: string;

  @Column({ type: 'varchar' })
  description: string;

  @Column({ type: 'jsonb' })
  skills: AgentSkill[];

  @Column({ name: 'claimed_at', type: 'timestamptz', nullable: true })
  claimedAt: Date | null;

  @Column({ type: 'boolean' })
  enabled: boolean;

  @Column({ name: 'publicly_discoverable', type: 'boolean' })
  publiclyDiscoverable: boolean;

  @Column({ name: 'allow_public_egress', type: 'boolean' })
  allowPublicEgress: boolean;

  @Column({ name: 'filter_mode', type: 'varchar' })
  filterMode: FilterMode;

  @Column({ type: 'varchar' })
  status: IdentityStatus;

  @Column({ name: 'claim_code_hash', type: 'bytea', nullable: true, select: false })
  claimCodeHash: Buffer | null;

  @Column({ name: 'claim_expires_at', type: 'timestamptz', nullable: true })
  claimExpiresAt: Date | null;

  /** Bumped on every card change; part of the card's `version` and ETag. */
  @Column({ name: 'card_version', type: 'integer' })
  cardVersion: number;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;

  @Column({ name: 'deleted_at', type: 'timestamptz', nullable: true })
  deletedAt: Date | null;

  get claimed(): boolean {
    return this.claimedAt !== null;
  }
}
