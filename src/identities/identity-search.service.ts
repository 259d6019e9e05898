import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { In, Repository } from 'typeorm';
import { creationPosition, decodeCursor, keysetAfter, pageLimit, pageOf, type PageQuery } from '../common/pagination';
import { Identity, type IdentityStatus } from './identity.entity';

/**
 * Publicly listed: claimed, enabled, publicly discoverable, not deleted. Spelled
 * exactly as the predicate of the partial indexes of migration
 * 1763700100000-identities-directory, so the planner can use them.
 */
const PUBLICLY_LISTED = `i.enabled AND i.publicly_discoverable AND i.status = 'active' AND i.claimed_at IS NOT NULL`;
const NEWEST_FIRST = 'ORDER BY i.created_at DESC, i.id DESC';

/**
 * How many rows of the keyset index a filtered public listing examines before it
 * concludes the filters are selective and asks their indexes instead. About
 * √(page × listed rows) balances the two plans' worst cases; 2,000 suits up to a
 * few hundred thousand listed identities.
 */
export const WALK_LIMIT = 2000;

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

interface Position {
  id: string;
  created_at: Date;
}

/** Numbered SQL parameters: `param(value)` appends one and returns its `$n`. */
class Params {
  readonly values: unknown[] = [];
  param = (value: unknown): string => `$${this.values.push(value)}`;
}

/** Full-text match: every word of `q` must start a word of the identity's text. */
function textMatch(q: string | undefined, p: Params): string[] {
  const tsquery = toPrefixQuery(q);
  return tsquery ? [`i.search_vector @@ ${p.param(tsquery)}::tsquery`] : [];
}

const and = (conditions: string[]) => conditions.join(' AND ');

/**
 * The directories' queries: keyset pagination over (created_at DESC, id DESC) and
 * indexed filters, so a page costs about the same at any depth and table size.
 * Each listing finds the page's ids, then loads those rows.
 */
@Injectable()
export class IdentitySearchService {
  constructor(@InjectRepository(Identity) private readonly identities: Repository<Identity>) {}

  /**
   * The public directory: `q` over handle, name, description and skills; `skill`;
   * `tag`. No single plan is fast for every filter: walking the keyset index and
   * filtering costs ~1/selectivity rows (a search that matches nothing reads every
   * listed row), fetching all matches through the GIN indexes and sorting costs
   * ~matches (a common word reads most rows), and planner estimates for prefix
   * searches are too rough to choose. So: walk at most WALK_LIMIT rows; if that
   * fills the page the matches are common and the page is exact; otherwise they are
   * rare, and the indexes fetch them all.
   */
  async listPublic(query: PublicListing): Promise<IdentityPage> {
    const limit = pageLimit(query);
    const p = new Params();
    const keyset = [PUBLICLY_LISTED, ...keysetAfter('i', decodeCursor(query.cursor), p.values)];
    const filters = [
      ...textMatch(query.q, p),
      ...(query.skill ? [`i.skill_keys @> ARRAY[lower(${p.param(query.skill)}::text)]`] : []),
      ...(query.tag ? [`i.skill_tags @> ARRAY[lower(${p.param(query.tag)}::text)]`] : []),
    ];
    if (filters.length === 0) {
      return this.load(await this.positions(`SELECT i.id, i.created_at FROM identities i WHERE ${and(keyset)} ${NEWEST_FIRST} LIMIT ${limit + 1}`, p), limit);
    }
    let rows = await this.positions(
      `SELECT i.id, i.created_at
         FROM (SELECT id, created_at, search_vector, skill_keys, skill_tags FROM identities i
                WHERE ${and(keyset)} ${NEWEST_FIRST} LIMIT ${WALK_LIMIT}) i
        WHERE ${and(filters)} ${NEWEST_FIRST} LIMIT ${limit + 1}`,
      p,
    );
    if (rows.length <= limit) {
      // MATERIALIZED keeps the planner from turning this back into the walk.
      rows = await this.positions(
        `WITH matches AS MATERIALIZED (SELECT i.id, i.created_at FROM identities i WHERE ${and([...keyset, ...filters])})
         SELECT i.id, i.created_at FROM matches i ${NEWEST_FIRST} LIMIT ${limit + 1}`,
        p,
      );
    }
    return this.load(rows, limit);
  }

  /** Every identity of one organization, whatever its state, optionally filtered. */
  async listForOrganization(organizationId: string, query: OrganizationListing): Promise<IdentityPage> {
    const p = new Params();
    const where = [
      `i.organization_id = ${p.param(organizationId)}::uuid`,
      ...textMatch(query.q, p),
      ...(query.enabled !== undefined ? [`i.enabled = ${p.param(query.enabled)}::boolean`] : []),
      ...(query.claimed !== undefined ? [query.claimed ? 'i.claimed_at IS NOT NULL' : 'i.claimed_at IS NULL'] : []),
      ...(query.status ? [`i.status = ${p.param(query.status)}`] : []),
      ...keysetAfter('i', decodeCursor(query.cursor), p.values),
    ];
    const limit = pageLimit(query);
    return this.load(await this.positions(`SELECT i.id, i.created_at FROM identities i WHERE ${and(where)} ${NEWEST_FIRST} LIMIT ${limit + 1}`, p), limit);
  }

  private positions(sql: string, p: Params): Promise<Position[]> {
    return this.identities.query(sql, p.values) as Promise<Position[]>;
  }

  /** The page's rows, in the order of `positions` (limit + 1 of them at most). */
  private async load(positions: Position[], limit: number): Promise<IdentityPage> {
    const { items, nextCursor } = pageOf(positions, limit, creationPosition);
    const rows = items.length > 0 ? await this.identities.findBy({ id: In(items.map((item) => item.id)) }) : [];
    const byId = new Map(rows.map((row) => [row.id, row]));
    return { items: items.map((item) => byId.get(item.id)!), nextCursor };
  }
}

/**
 * The tsquery for `q` (cast with `::tsquery`): each word a prefix, all required.
 * Words are letters and digits only, so user input never reaches the tsquery
 * syntax; `q` without any word filters nothing.
 *
 * Each word is a quoted lexeme, taken as it is: `to_tsquery` would run it through
 * the text parser, which reads a handle's `3e022f41` as the number `3e022` then the
 * word `f41`, while the indexed text holds the lexeme `3e022f41` (the parts of a
 * hyphenated word). The parser does read an all-digit part after a hyphen as a
 * signed number (`agent-34821630` indexes `-34821630`), so digits match that form too.
 */
export function toPrefixQuery(q: string | undefined): string | null {
  const words = (q?.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).slice(0, MAX_SEARCH_WORDS);
  const lexeme = (word: string) => (/^\d+$/.test(word) ? `('${word}':* | '-${word}':*)` : `'${word}':*`);
  return words.length > 0 ? words.map(lexeme).join(' & ') : null;
}
