import type { EntityManager } from 'typeorm';
import { conflict } from '../common/app-error';
import type { CardFieldsDto } from './dto/card-fields.dto';
import { canonicalSkills } from './identity-view';
import { Identity, type FilterMode } from './identity.entity';

/** What creating an identity needs; creation by an organization and agent signup differ only here. */
export interface NewIdentity {
  handle: string;
  /** Null for agent signup: the identity stays unclaimed until a Console user claims it. */
  organizationId: string | null;
  card: CardFieldsDto;
  settings?: { publiclyDiscoverable?: boolean; allowPublicEgress?: boolean; filterMode?: FilterMode };
  claim?: { codeHash: Buffer; ttlHours: number };
}

/**
 * Inserts an identity (receiver disabled) and returns it. A taken handle — by any
 * identity, deleted and unclaimed ones included, since handles are never reused —
 * is a 409; `ON CONFLICT` keeps a race between two creators from becoming a 500.
 */
export async function insertIdentity(em: EntityManager, row: NewIdentity): Promise<Identity> {
  const inserted = (await em.query(
    `INSERT INTO identities (agent_handle, organization_id, claimed_at, display_name, description, skills,
                             publicly_discoverable, allow_public_egress, filter_mode, claim_code_hash, claim_expires_at)
     VALUES ($1, $2::uuid, CASE WHEN $2::uuid IS NULL THEN NULL ELSE now() END, $3, $4, $5::jsonb, $6, $7, $8,
             $9::bytea, CASE WHEN $9::bytea IS NULL THEN NULL ELSE now() + make_interval(hours => $10::int) END)
     ON CONFLICT (agent_handle) DO NOTHING
     RETURNING id`,
    [
      row.handle,
      row.organizationId,
      row.card.display_name ?? '',
      row.card.description ?? '',
      JSON.stringify(canonicalSkills(row.card.skills ?? [])),
      row.settings?.publiclyDiscoverable ?? false,
      row.settings?.allowPublicEgress ?? false,
      row.settings?.filterMode ?? 'whitelist',
      row.claim?.codeHash ?? null,
      row.claim?.ttlHours ?? null,
    ],
  )) as Array<{ id: string }>;
  if (inserted.length === 0) {
    throw conflict('handle_taken', `The handle "${row.handle}" is taken; handles are never reused, even after deletion.`);
  }
  return em.getRepository(Identity).findOneByOrFail({ id: inserted[0].id });
}

/** The identity at `handle`, locked for the rest of the transaction. */
export function lockIdentity(em: EntityManager, handle: string): Promise<Identity | null> {
  return em.getRepository(Identity).findOne({ where: { agentHandle: handle }, lock: { mode: 'pessimistic_write' } });
}

/** The columns of an identity that its entity maps (the claim code hash stays out). */
const ENTITY_COLUMNS = `id, agent_handle, organization_id, display_name, description, skills, claimed_at, enabled,
  publicly_discoverable, allow_public_egress, filter_mode, status, claim_expires_at, card_version, created_at, updated_at, deleted_at`;

interface IdentityRow {
  id: string;
  agent_handle: string;
  organization_id: string | null;
  display_name: string;
  description: string;
  skills: Identity['skills'];
  claimed_at: Date | null;
  enabled: boolean;
  publicly_discoverable: boolean;
  allow_public_egress: boolean;
  filter_mode: FilterMode;
  status: Identity['status'];
  claim_expires_at: Date | null;
  card_version: number;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

/** Lookups by handle and by id, as prepared statements for the per-request paths (HotQuery). */
export const SELECT_IDENTITY_BY_HANDLE = `SELECT ${ENTITY_COLUMNS} FROM identities WHERE agent_handle = $1`;
export const SELECT_IDENTITY_BY_ID = `SELECT ${ENTITY_COLUMNS} FROM identities WHERE id = $1`;
export const SELECT_IDENTITIES_BY_IDS = `SELECT ${ENTITY_COLUMNS} FROM identities WHERE id = ANY($1::uuid[])`;
/** Both parties of a protocol call in one round trip: the caller by id, the worker by handle. */
export const SELECT_IDENTITY_BY_ID_OR_HANDLE = `SELECT ${ENTITY_COLUMNS} FROM identities WHERE id = $1 OR agent_handle = $2`;

export function identityFromRow(row: IdentityRow | undefined): Identity | null {
  if (!row) return null;
  return Object.assign(new Identity(), {
    id: row.id,
    agentHandle: row.agent_handle,
    organizationId: row.organization_id,
    displayName: row.display_name,
    description: row.description,
    skills: row.skills,
    claimedAt: row.claimed_at,
    enabled: row.enabled,
    publiclyDiscoverable: row.publicly_discoverable,
    allowPublicEgress: row.allow_public_egress,
    filterMode: row.filter_mode,
    status: row.status,
    claimExpiresAt: row.claim_expires_at,
    cardVersion: row.card_version,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    deletedAt: row.deleted_at,
  });
}

export type { IdentityRow };
