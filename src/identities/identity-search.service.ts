import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository, type SelectQueryBuilder } from 'typeorm';
import { decodeCursor, pageLimit, pageOf, type PageQuery } from '../common/pagination';
import { Identity, type IdentityStatus } from './identity.entity';

/**
 * Publicly listed: claimed, enabled, publicly discoverable, not deleted. Spelled
 * exactly as the predicate of the partial indexes of migration
 * 1763700100000-identities-directory, so the planner can use them.
 */
const PUBLICLY_LISTED = `i.enabled AND i.publicly_discoverable AND i.status = 'active' AND i.claimed_at IS NOT NULL`;

/** Search words: letters and digits, each matched as a prefix; at most this many. */
const MAX_SEARCH_WORDS = 8;

export interface PublicListing extends PageQuery {
  q?: string;
  skill?: string;
  tag?: string;
}

export interface OrganizationListing extends PageQuery {
  q?: string;
  enabled?: boolean;
  claimed?: boolean;
  status?: IdentityStatus;
}

export interface IdentityPage {
  items: Identity[];
  nextCursor: string | null;
}

/**
 * The directories' queries. Keyset pagination over (created_at DESC, id DESC) and
 * indexed filters only, so a page costs the same at any depth and size.
 */
@Injectable()
export class IdentitySearchService {
  constructor(@InjectRepository(Identity) private readonly identities: Repository<Identity>) {}

  /** The public directory's rows: `q` over name, handle, description and skills; `skill`; `tag`. */
  listPublic(query: PublicListing): Promise<IdentityPage> {
    const qb = this.identities.createQueryBuilder('i').where(PUBLICLY_LISTED);
    matchText(qb, query.q);
    if (query.skill) qb.andWhere('i.skill_keys @> ARRAY[lower(CAST(:skill AS text))]', { skill: query.skill });
    if (query.tag) qb.andWhere('i.skill_tags @> ARRAY[lower(CAST(:tag AS text))]', { tag: query.tag });
    return page(qb, query);
  }

  /** Every identity of one organization, whatever its state, optionally filtered. */
  listForOrganization(organizationId: string, query: OrganizationListing): Promise<IdentityPage> {
    const qb = this.identities.createQueryBuilder('i').where('i.organization_id = :organizationId', { organizationId });
    matchText(qb, query.q);
    if (query.enabled !== undefined) qb.andWhere('i.enabled = :enabled', { enabled: query.enabled });
    if (query.claimed !== undefined) qb.andWhere(query.claimed ? 'i.claimed_at IS NOT NULL' : 'i.claimed_at IS NULL');
    if (query.status) qb.andWhere('i.status = :status', { status: query.status });
    return page(qb, query);
  }
}

/**
 * Full-text match on the stored `search_vector`: every word of `q` must start a
 * word of the identity's text. Words are letters and digits only, so user input
 * never reaches the tsquery syntax. `q` without any word filters nothing.
 */
export function toPrefixQuery(q: string | undefined): string | null {
  const words = (q?.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).slice(0, MAX_SEARCH_WORDS);
  return words.length > 0 ? words.map((word) => `${word}:*`).join(' & ') : null;
}

function matchText(qb: SelectQueryBuilder<Identity>, q: string | undefined): void {
  const tsquery = toPrefixQuery(q);
  if (tsquery) qb.andWhere(`i.search_vector @@ to_tsquery('simple', :tsquery)`, { tsquery });
}

async function page(qb: SelectQueryBuilder<Identity>, query: PageQuery): Promise<IdentityPage> {
  const limit = pageLimit(query);
  const cursor = decodeCursor(query.cursor);
  if (cursor) {
    qb.andWhere('(i.created_at, i.id) < (CAST(:at AS timestamptz), CAST(:id AS uuid))', { at: cursor.at, id: cursor.id });
  }
  const rows = await qb.orderBy('i.created_at', 'DESC').addOrderBy('i.id', 'DESC').limit(limit + 1).getMany();
  const { items, nextCursor } = pageOf(rows, limit, (row) => ({ at: row.createdAt.toISOString(), id: row.id }));
  return { items, nextCursor };
}
