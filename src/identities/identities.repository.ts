import { Injectable } from '@nestjs/common';
import { creationPosition, encodeCursor, keyset, type Keyset, type PageQuery } from '../common/pagination';
import { isUuid } from '../common/parse-id.pipe';
import { Database, type Tx } from '../database/database';
import { DummyValue, GenerateSql } from '../database/generate-sql';
import type { RecordOf, RowOf } from '../database/row';
import { sql, type Sql } from '../database/sql';
import { Identity, type AgentSkill, type FilterMode, type IdentityStatus } from './identity.entity';

/** The columns of an identity that its entity loads (the claim code hash and the generated search columns stay out). */
export type IdentityRow = Pick<
  RowOf<Identity>,
  | 'id'
  | 'agent_handle'
  | 'organization_id'
  | 'display_name'
  | 'description'
  | 'skills'
  | 'claimed_at'
  | 'enabled'
  | 'publicly_discoverable'
  | 'allow_public_egress'
  | 'filter_mode'
  | 'require_skill'
  | 'daily_task_quota'
  | 'monthly_cost_budget_amount'
  | 'monthly_cost_budget_currency'
  | 'status'
  | 'claim_expires_at'
  | 'card_version'
  | 'created_at'
  | 'updated_at'
  | 'deleted_at'
>;

export const IDENTITY_COLUMNS =
  sql.raw(`id, agent_handle, organization_id, display_name, description, skills, claimed_at, enabled,
  publicly_discoverable, allow_public_egress, filter_mode, require_skill, daily_task_quota, monthly_cost_budget_amount,
  monthly_cost_budget_currency, status, claim_expires_at, card_version, created_at,
  updated_at, deleted_at`);

/** A row of a keyset walk: the page position only; the page's rows are loaded after. */
type Position = Pick<RowOf<Identity>, 'id' | 'created_at'>;

/** What creating an identity needs; creation by an organization and agent signup differ only here. */
export interface NewIdentity {
  handle: string;
  /** Null for agent signup: the identity stays unclaimed until a Console user claims it. */
  organizationId: string | null;
  displayName: string;
  description: string;
  /** Canonical (identity.view.ts canonicalSkills). */
  skills: AgentSkill[];
  publiclyDiscoverable: boolean;
  allowPublicEgress: boolean;
  filterMode: FilterMode;
  claim?: { codeHash: Buffer; ttlHours: number };
}

/** The settings a PATCH may change, by entity property. */
export interface IdentitySettings {
  enabled?: boolean;
  allowPublicEgress?: boolean;
  publiclyDiscoverable?: boolean;
  filterMode?: FilterMode;
  requireSkill?: boolean;
  dailyTaskQuota?: number | null;
  monthlyCostBudgetAmount?: string | null;
  monthlyCostBudgetCurrency?: string | null;
}

/** The copy of a card; `skills` canonical. */
export interface CardCopy {
  displayName: string;
  description: string;
  skills: AgentSkill[];
}

/** When an agent counts as unavailable (docs/api.md §4, "Availability"; the configuration's). */
export interface AvailabilityRule {
  /** An upstream whose last this many forward attempts failed. */
  failedForwards: number;
  /** A worker with a task it has not answered (still `submitted`) for this long. */
  unansweredMs: number;
}

/** Filters on a card's skills, in both directories; and on availability. */
export interface CardFilters {
  /** Only agents the rule finds available (`available: true`), or only those it does not. */
  available?: { available: boolean; rule: AvailabilityRule };
  /** A public skill's id or name (case-insensitive). */
  skill?: string;
  /** A public skill's tag (case-insensitive). */
  tag?: string;
  /** A media type a public skill declares in its inputModes (the card's default modes are the caller's to test). */
  inputMode?: string;
  /** Likewise for outputModes. */
  outputMode?: string;
}

export interface PublicFilters extends CardFilters {
  /** Searched and ranked (RankedSearchRepository). */
  q?: string;
  /** Only identities of these organizations. */
  organizationIds?: string[];
}

export interface OrganizationFilters extends CardFilters {
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
 * Publicly listed: claimed, enabled, publicly discoverable, not deleted. Spelled
 * exactly as the predicate of the partial indexes of migration
 * 1763700100000-identities-directory, so the planner can use them.
 */
export const PUBLICLY_LISTED = sql`i.enabled AND i.publicly_discoverable AND i.status = 'active' AND i.claimed_at IS NOT NULL`;

/**
 * How many rows of the keyset index a filtered public listing examines before it
 * concludes the filters are selective and asks their indexes instead. About
 * √(page × listed rows) balances the two plans' worst cases; 2,000 suits up to a
 * few hundred thousand listed identities.
 */
export const WALK_LIMIT = 2000;

/** The organization directory's conditions on the identity aliased `i`: its state, then its card. */
export function organizationConditions(filters: OrganizationFilters): Sql[] {
  return [
    filters.enabled !== undefined ? sql`i.enabled = ${filters.enabled}::boolean` : sql.empty,
    filters.claimed !== undefined
      ? filters.claimed
        ? sql`i.claimed_at IS NOT NULL`
        : sql`i.claimed_at IS NULL`
      : sql.empty,
    filters.status ? sql`i.status = ${filters.status}` : sql.empty,
    ...cardFilterConditions(filters),
  ];
}

/** The conditions of `filters` on the identity aliased `i` (each served by a partial GIN index on public rows). */
export function cardFilterConditions(filters: CardFilters & { organizationIds?: string[] }): Sql[] {
  return [
    filters.skill ? sql`i.skill_keys @> ARRAY[lower(${filters.skill}::text)]` : sql.empty,
    filters.tag ? sql`i.skill_tags @> ARRAY[lower(${filters.tag}::text)]` : sql.empty,
    filters.inputMode ? sql`i.skill_input_modes @> ARRAY[lower(${filters.inputMode}::text)]` : sql.empty,
    filters.outputMode ? sql`i.skill_output_modes @> ARRAY[lower(${filters.outputMode}::text)]` : sql.empty,
    filters.organizationIds ? sql`i.organization_id = ANY(${filters.organizationIds}::uuid[])` : sql.empty,
    filters.available
      ? filters.available.available
        ? sql`NOT ${unavailableCondition(filters.available.rule)}`
        : unavailableCondition(filters.available.rule)
      : sql.empty,
  ];
}

/**
 * Read model: whether the identity aliased `i` is unavailable (docs/api.md §4,
 * "Availability") — its upstream's forward attempts (upstream's identity_upstreams) or
 * its oldest unanswered task (the ledger's tasks, through ix_tasks_worker_state): one
 * index probe each per identity, rather than a copy of either kept on every send.
 */
function unavailableCondition(rule: AvailabilityRule): Sql {
  return sql`(EXISTS (SELECT 1 FROM identity_upstreams u WHERE u.identity_id = i.id AND u.failed_forwards >= ${rule.failedForwards}::int)
    OR EXISTS (SELECT 1 FROM tasks t WHERE t.worker_identity_id = i.id AND t.state = 'submitted'
                  AND t.created_at < now() - make_interval(secs => ${rule.unansweredMs / 1000}::float8)))`;
}

const SETTING_COLUMNS = {
  enabled: 'enabled',
  allowPublicEgress: 'allow_public_egress',
  publiclyDiscoverable: 'publicly_discoverable',
  filterMode: 'filter_mode',
  requireSkill: 'require_skill',
  dailyTaskQuota: 'daily_task_quota',
  monthlyCostBudgetAmount: 'monthly_cost_budget_amount',
  monthlyCostBudgetCurrency: 'monthly_cost_budget_currency',
} as const satisfies Record<keyof IdentitySettings, string>;

const EXAMPLE_IDENTITY: NewIdentity = {
  handle: DummyValue.HANDLE,
  organizationId: DummyValue.UUID,
  displayName: DummyValue.STRING,
  description: DummyValue.STRING,
  skills: [],
  publiclyDiscoverable: false,
  allowPublicEgress: false,
  filterMode: 'whitelist',
};
const EXAMPLE_PAGE: PageQuery = {
  limit: 10,
  cursor: encodeCursor({ at: DummyValue.DATE.toISOString(), id: DummyValue.UUID }),
};

/**
 * Every statement on `identities`: the per-request lookups (named prepared
 * statements), creation, card and settings changes, soft delete, claim, and the
 * directories' keyset listings. Rows come back as `Identity` entities.
 */
@Injectable()
export class IdentitiesRepository {
  constructor(private readonly db: Database) {}

  /** Any identity with this handle, whatever its state (handles are never reused). Hot path. */
  @GenerateSql({ params: [DummyValue.HANDLE] })
  async findByHandle(handle: string): Promise<Identity | null> {
    const [row] = await this.db.prepared<IdentityRow>(
      'identity_by_handle',
      sql`SELECT ${IDENTITY_COLUMNS} FROM identities WHERE agent_handle = ${handle}`,
    );
    return identityFromRow(row);
  }

  /** Hot path. */
  @GenerateSql({ params: [DummyValue.UUID] })
  async findById(id: string): Promise<Identity | null> {
    const [row] = await this.db.prepared<IdentityRow>(
      'identity_by_id',
      sql`SELECT ${IDENTITY_COLUMNS} FROM identities WHERE id = ${id}`,
    );
    return identityFromRow(row);
  }

  /** Several identities in one query, in no particular order. Hot path. */
  @GenerateSql({ params: [[DummyValue.UUID, DummyValue.UUID_2]] })
  async findByIds(ids: readonly string[]): Promise<Identity[]> {
    if (ids.length === 0) {
      return [];
    }
    const rows = await this.db.prepared<IdentityRow>(
      'identities_by_ids',
      sql`SELECT ${IDENTITY_COLUMNS} FROM identities WHERE id = ANY(${[...new Set(ids)]}::uuid[])`,
    );
    return rows.map(toIdentity);
  }

  /**
   * Inserts an identity (receiver disabled) and returns it; null when the handle is
   * taken by any identity, deleted and unclaimed ones included (`ON CONFLICT` keeps a
   * race between two creators from becoming a 500).
   */
  @GenerateSql({ params: [EXAMPLE_IDENTITY] })
  async insert(identity: NewIdentity, tx?: Tx): Promise<Identity | null> {
    const organizationId = identity.organizationId;
    const codeHash = identity.claim?.codeHash ?? null;
    const row = await this.db.one<IdentityRow>(
      sql`
      INSERT INTO identities (agent_handle, organization_id, claimed_at, display_name, description, skills,
                              publicly_discoverable, allow_public_egress, filter_mode, claim_code_hash, claim_expires_at)
      VALUES (${identity.handle}, ${organizationId}::uuid, CASE WHEN ${organizationId}::uuid IS NULL THEN NULL ELSE now() END,
              ${identity.displayName}, ${identity.description}, ${JSON.stringify(identity.skills)}::jsonb,
              ${identity.publiclyDiscoverable}, ${identity.allowPublicEgress}, ${identity.filterMode},
              ${codeHash}::bytea, CASE WHEN ${codeHash}::bytea IS NULL THEN NULL ELSE now() + make_interval(hours => ${identity.claim?.ttlHours ?? null}::int) END)
      ON CONFLICT (agent_handle) DO NOTHING
      RETURNING ${IDENTITY_COLUMNS}`,
      tx,
    );
    return identityFromRow(row);
  }

  /** The identity at `handle`, locked for the rest of the transaction. */
  @GenerateSql({ params: [DummyValue.HANDLE] })
  async lockByHandle(handle: string, tx?: Tx): Promise<Identity | null> {
    return identityFromRow(
      await this.db.one<IdentityRow>(
        sql`SELECT ${IDENTITY_COLUMNS} FROM identities WHERE agent_handle = ${handle} LIMIT 1 FOR UPDATE`,
        tx,
      ),
    );
  }

  /** New card copy; bumps card_version. */
  @GenerateSql({
    params: [DummyValue.UUID, { displayName: DummyValue.STRING, description: DummyValue.STRING, skills: [] }],
  })
  async updateCard(id: string, card: CardCopy, tx?: Tx): Promise<Identity | null> {
    return identityFromRow(
      await this.db.one<IdentityRow>(
        sql`
      UPDATE identities
         SET display_name = ${card.displayName}, description = ${card.description}, skills = ${JSON.stringify(card.skills)}::jsonb,
             card_version = card_version + 1, updated_at = now()
       WHERE id = ${id}
      RETURNING ${IDENTITY_COLUMNS}`,
        tx,
      ),
    );
  }

  /** Sets the given settings (none: only reads the row back). */
  @GenerateSql(
    {
      name: 'all',
      params: [
        DummyValue.UUID,
        { enabled: true, allowPublicEgress: false, publiclyDiscoverable: true, filterMode: 'blacklist' },
      ],
    },
    { name: 'none', params: [DummyValue.UUID, {}] },
  )
  async updateSettings(id: string, settings: IdentitySettings, tx?: Tx): Promise<Identity | null> {
    const fields = (Object.keys(SETTING_COLUMNS) as Array<keyof IdentitySettings>).filter(
      (field) => settings[field] !== undefined,
    );
    if (fields.length === 0) {
      return identityFromRow(
        await this.db.one<IdentityRow>(sql`SELECT ${IDENTITY_COLUMNS} FROM identities WHERE id = ${id}`, tx),
      );
    }
    const assignments = fields.map((field) => sql`${sql.raw(SETTING_COLUMNS[field])} = ${settings[field]}`);
    return identityFromRow(
      await this.db.one<IdentityRow>(
        sql`
      UPDATE identities SET ${sql.join(assignments)}, updated_at = now() WHERE id = ${id} RETURNING ${IDENTITY_COLUMNS}`,
        tx,
      ),
    );
  }

  /** Soft delete: the row stays (its handle reserved), its receiver off. */
  @GenerateSql({ params: [DummyValue.UUID] })
  async markDeleted(id: string, tx?: Tx): Promise<Identity | null> {
    return identityFromRow(
      await this.db.one<IdentityRow>(
        sql`
      UPDATE identities SET status = 'deleted', deleted_at = now(), enabled = false, updated_at = now()
       WHERE id = ${id}
      RETURNING ${IDENTITY_COLUMNS}`,
        tx,
      ),
    );
  }

  /** The id of the unclaimed, active identity whose claim code hashes to `codeHash` and has not expired, locked. */
  @GenerateSql({ params: [DummyValue.BUFFER] })
  async lockClaimable(codeHash: Buffer, tx?: Tx): Promise<string | null> {
    const row = await this.db.one<Pick<RowOf<Identity>, 'id'>>(
      sql`
      SELECT id FROM identities
       WHERE claim_code_hash = ${codeHash} AND claimed_at IS NULL AND status = 'active' AND claim_expires_at > now()
       FOR UPDATE`,
      tx,
    );
    return row?.id ?? null;
  }

  /**
   * Claims the identity into `organizationId` and clears its code. The card's
   * provider becomes the organization, so card_version is bumped.
   */
  @GenerateSql({ params: [DummyValue.UUID, DummyValue.UUID_2] })
  async claim(id: string, organizationId: string, tx?: Tx): Promise<Identity | null> {
    return identityFromRow(
      await this.db.one<IdentityRow>(
        sql`
      UPDATE identities
         SET organization_id = ${organizationId}, claimed_at = now(), claim_code_hash = NULL, claim_expires_at = NULL,
             card_version = card_version + 1, updated_at = now()
       WHERE id = ${id}
      RETURNING ${IDENTITY_COLUMNS}`,
        tx,
      ),
    );
  }

  /**
   * The public directory without a search (`q` is ranked: RankedSearchRepository),
   * filtered by skill, tag, modes or organization; keyset pages over (created_at DESC, id DESC). No single plan is fast for
   * every filter: walking the keyset index and filtering costs ~1/selectivity rows
   * (a search that matches nothing reads every listed row), fetching all matches
   * through the GIN indexes and sorting costs ~matches (a common word reads most
   * rows), and planner estimates for prefix searches are too rough to choose. So:
   * walk at most WALK_LIMIT rows; if that fills the page the matches are common and
   * the page is exact (and read whole, one statement); otherwise they are rare, and the
   * indexes fetch them all.
   */
  @GenerateSql(
    { name: 'unfiltered', params: [{}, EXAMPLE_PAGE] },
    {
      name: 'filtered',
      params: [{ skill: DummyValue.STRING, tag: DummyValue.STRING }, EXAMPLE_PAGE],
    },
  )
  async listPublic(filters: PublicFilters, pageQuery: PageQuery): Promise<IdentityPage> {
    const page = keyset('i', pageQuery);
    const listed = sql`${PUBLICLY_LISTED} AND ${page.after}`;
    const conditions = cardFilterConditions(filters);
    const matching = sql.join(conditions, ' AND ');
    if (matching.isEmpty) {
      return rowsPage(
        await this.db.rows<IdentityRow>(
          sql`SELECT ${IDENTITY_COLUMNS} FROM identities i WHERE ${listed} ${page.preparedTail}`,
        ),
        page,
      );
    }
    const walked = await this.db.rows<IdentityRow>(sql`
      SELECT ${IDENTITY_COLUMNS}
        FROM (SELECT ${IDENTITY_COLUMNS}, skill_keys, skill_tags, skill_input_modes, skill_output_modes
                FROM identities i
               WHERE ${listed} ORDER BY i.created_at DESC, i.id DESC LIMIT ${sql.raw(String(WALK_LIMIT))}) i
       WHERE ${matching} ${page.preparedTail}`);
    if (walked.length > page.limit) {
      return rowsPage(walked, page);
    }
    // MATERIALIZED keeps the planner from turning this back into the walk.
    const positions = await this.db.rows<Position>(sql`
      WITH matches AS MATERIALIZED (SELECT i.id, i.created_at FROM identities i WHERE ${listed} AND ${matching})
      SELECT i.id, i.created_at FROM matches i ${page.preparedTail}`);
    return loadPage(positions, page, (ids) => this.findByIds(ids));
  }

  /** Every identity of one organization, whatever its state, optionally filtered (not searched: RankedSearchRepository); newest first. */
  @GenerateSql(
    { name: 'unfiltered', params: [DummyValue.UUID, {}, EXAMPLE_PAGE] },
    {
      name: 'filtered',
      params: [DummyValue.UUID, { enabled: true, claimed: false, status: 'active', tag: 'finance' }, EXAMPLE_PAGE],
    },
  )
  async listForOrganization(
    organizationId: string,
    filters: OrganizationFilters,
    pageQuery: PageQuery,
  ): Promise<IdentityPage> {
    const page = keyset('i', pageQuery);
    const where = sql.where([
      sql`i.organization_id = ${organizationId}::uuid`,
      ...organizationConditions(filters),
      page.after,
    ]);
    return rowsPage(
      await this.db.rows<IdentityRow>(sql`SELECT ${IDENTITY_COLUMNS} FROM identities i ${where} ${page.tail}`),
      page,
    );
  }

  /** Of `ids`, those unavailable under `rule` (the directory's `availability`). */
  @GenerateSql({ params: [[DummyValue.UUID], { failedForwards: 3, unansweredMs: 900_000 }] })
  async unavailableAmong(ids: readonly string[], rule: AvailabilityRule): Promise<Set<string>> {
    if (ids.length === 0) {
      return new Set();
    }
    const rows = await this.db.rows<{ id: string }>(
      sql`SELECT i.id FROM identities i WHERE i.id = ANY(${[...ids]}::uuid[]) AND ${unavailableCondition(rule)}`,
    );
    return new Set(rows.map((row) => row.id));
  }

  /** When any identity last changed (the AI Catalog's Last-Modified); null while there are none. */
  @GenerateSql({ params: [] })
  async lastChange(): Promise<Date | null> {
    const row = await this.db.one<{ at: Date | null }>(sql`SELECT max(updated_at) AS at FROM identities`);
    return row?.at ?? null;
  }

  // for keys: keys.service.ts lockBindableIdentity — the identity an admin key or Console user may bind a new agent key to.
  /**
   * The active identity `id` and its organization, locked for the rest of the transaction; null if there is none.
   * Whether the caller may bind a key to it is requireAccess's call ('key.bind').
   */
  @GenerateSql({ params: [DummyValue.UUID] })
  async lockBindable(id: string, tx?: Tx): Promise<Pick<RecordOf<Identity>, 'id' | 'organizationId'> | null> {
    return this.db.one<Pick<RecordOf<Identity>, 'id' | 'organizationId'>>(
      sql`SELECT id, organization_id AS "organizationId" FROM identities WHERE id = ${id} AND status = 'active' FOR UPDATE`,
      tx,
    );
  }

  // for events: webhooks.service.ts — the identity a new webhook is scoped to, named by handle or id (requireAccess decides whose it may be).
  /** The active identity named by its id (a uuid) or its handle, with its organization; null if there is none. */
  @GenerateSql({ name: 'by id', params: [DummyValue.UUID] }, { name: 'by handle', params: [DummyValue.HANDLE] })
  async findActiveByIdOrHandle(
    idOrHandle: string,
    tx?: Tx,
  ): Promise<{ id: string; organizationId: string | null } | null> {
    const named = isUuid(idOrHandle) ? sql`id = ${idOrHandle}::uuid` : sql`agent_handle = ${idOrHandle}`;
    return this.db.one<Pick<RecordOf<Identity>, 'id' | 'organizationId'>>(
      sql`
      SELECT id, organization_id AS "organizationId" FROM identities WHERE status = 'active' AND ${named}`,
      tx,
    );
  }
}

/** A page of whole rows (limit + 1 of them at most), in order. */
function rowsPage(rows: IdentityRow[], page: Keyset): IdentityPage {
  const { items, nextCursor } = page.cut(rows, creationPosition);
  return { items: items.map(toIdentity), nextCursor };
}

/** The page's rows, in the order of `positions` (limit + 1 of them at most), loaded by `find`. */
async function loadPage(
  positions: Position[],
  page: Keyset,
  find: (ids: string[]) => Promise<Identity[]>,
): Promise<IdentityPage> {
  const { items, nextCursor } = page.cut(positions, creationPosition);
  const rows = await find(items.map((item) => item.id));
  const byId = new Map(rows.map((row) => [row.id, row]));
  return { items: items.map((item) => byId.get(item.id)!), nextCursor };
}

export function toIdentity(row: IdentityRow): Identity {
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
    requireSkill: row.require_skill,
    dailyTaskQuota: row.daily_task_quota,
    monthlyCostBudgetAmount: row.monthly_cost_budget_amount,
    monthlyCostBudgetCurrency: row.monthly_cost_budget_currency,
    status: row.status,
    claimExpiresAt: row.claim_expires_at,
    cardVersion: row.card_version,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    deletedAt: row.deleted_at,
  });
}

function identityFromRow(row: IdentityRow | null | undefined): Identity | null {
  return row ? toIdentity(row) : null;
}
