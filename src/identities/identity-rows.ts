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
