import { Injectable } from '@nestjs/common';
import { encodeCursor, recordCreationPosition, keyset, type PageQuery } from '../common/pagination';
import { isUuid } from '../common/parse-id.pipe';
import { emailKey } from '../common/email-key';
import { Database, type Tx } from '../database/database';
import { DummyValue, GenerateSql } from '../database/generate-sql';
import type { RecordOf } from '../database/row';
import { sql } from '../database/sql';
import type { AuditActorType, AuditEvent } from './audit-event.entity';

/** An entry as the log's reads return it. */
export type AuditRecord = RecordOf<AuditEvent>;

/** An entry as the list shows it: with its actor's name now (the user's email, the key's label). */
export type AuditListRecord = AuditRecord & { actorName: string | null };

/**
 * Named, never `a.*`: a prepared statement's result columns must not change under it when a migration adds one.
 * Named as AuditRecord's properties, so rows arrive as records.
 */
const AUDIT_COLUMNS = sql.raw(
  `a.id, a.organization_id AS "organizationId", a.actor_type AS "actorType", a.actor_id AS "actorId",
  a.actor_label AS "actorLabel", a.action, a.target_type AS "targetType", a.target_id AS "targetId",
  a.target_label AS "targetLabel", a.changes, a.request_id AS "requestId", a.client_address AS "clientAddress",
  a.created_at AS "createdAt"`,
);

/** An entry to store (the changes are already redacted). */
export interface NewAuditEntry {
  organizationId: string;
  actorType: AuditActorType;
  actorId: string | null;
  actorLabel: string | null;
  action: string;
  targetType: string;
  targetId: string | null;
  targetLabel: string | null;
  changes: Record<string, { before: unknown; after: unknown }>;
  requestId: string | null;
  clientAddress: string | null;
}

/** The filters of `GET /audit-events` besides the organization. */
export interface AuditListFilter extends PageQuery {
  /** An actor id, `signup`, or a Console user's email or an API key's label. */
  actor?: string;
  /** A target id, or its handle/label. */
  target?: string;
  /** An action, or a prefix ending in `.*` (`api_key.*`). */
  action?: string;
  since?: string;
}

/** Every statement on `audit_events`. */
@Injectable()
export class AuditRepository {
  constructor(private readonly db: Database) {}

  @GenerateSql({
    params: [
      {
        organizationId: DummyValue.UUID,
        actorType: 'api_key',
        actorId: DummyValue.UUID_2,
        actorLabel: DummyValue.STRING,
        action: 'api_key.updated',
        targetType: 'api_key',
        targetId: DummyValue.UUID,
        targetLabel: DummyValue.STRING,
        changes: { label: { before: 'a', after: 'b' } },
        requestId: DummyValue.STRING,
        clientAddress: 'ip:127.0.0.1',
      } satisfies NewAuditEntry,
    ],
  })
  async insert(entry: NewAuditEntry, tx?: Tx): Promise<void> {
    await this.db.execute(
      sql`
      INSERT INTO audit_events (organization_id, actor_type, actor_id, actor_label, action, target_type, target_id, target_label,
                                changes, request_id, client_address)
      VALUES (${entry.organizationId}, ${entry.actorType}, ${entry.actorId}, ${entry.actorLabel}, ${entry.action}, ${entry.targetType},
              ${entry.targetId}, ${entry.targetLabel}, ${JSON.stringify(entry.changes)}::jsonb, ${entry.requestId}, ${entry.clientAddress})`,
      tx,
    );
  }

  /**
   * Read model: one page of the organization's entries, newest first, each with its
   * actor's name now (the member's email, the key's label) from `console_users` and
   * `api_keys`, so the log shows and filters by the names people use in one statement.
   */
  @GenerateSql(
    { name: 'first page', params: [DummyValue.UUID, {}] },
    {
      name: 'filtered',
      params: [
        DummyValue.UUID,
        {
          actor: DummyValue.UUID_2,
          target: DummyValue.HANDLE,
          action: 'api_key.*',
          since: DummyValue.DATE.toISOString(),
          cursor: encodeCursor({ at: DummyValue.DATE.toISOString(), id: DummyValue.UUID }),
        },
      ],
    },
    { name: 'by email or key label', params: [DummyValue.UUID, { actor: 'ada@example.com' }] },
    {
      name: 'by signup, exact action, target id',
      params: [DummyValue.UUID, { actor: 'signup', target: DummyValue.UUID, action: 'identity.created' }],
    },
  )
  async list(
    organizationId: string,
    filter: AuditListFilter,
  ): Promise<{ items: AuditListRecord[]; nextCursor: string | null }> {
    const page = keyset('a', filter);
    const actor =
      filter.actor === undefined
        ? sql.empty
        : filter.actor === 'signup'
          ? sql`a.actor_type = 'signup'`
          : isUuid(filter.actor)
            ? sql`a.actor_id = ${filter.actor}::uuid`
            : sql`(u.email_key = ${emailKey(filter.actor)} OR (a.actor_type = 'api_key' AND (k.label = ${filter.actor} OR a.actor_label = ${filter.actor})))`;
    const target =
      filter.target === undefined
        ? sql.empty
        : isUuid(filter.target)
          ? sql`a.target_id = ${filter.target}`
          : sql`(a.target_id = ${filter.target} OR a.target_label = ${filter.target})`;
    const action =
      filter.action === undefined
        ? sql.empty
        : filter.action.endsWith('.*')
          ? sql`starts_with(a.action, ${filter.action.slice(0, -1)})`
          : sql`a.action = ${filter.action}`;
    const where = sql.join(
      [
        sql`a.organization_id = ${organizationId}`,
        actor,
        target,
        action,
        filter.since !== undefined ? sql`a.created_at >= ${filter.since}::timestamptz` : sql.empty,
        page.after,
      ],
      ' AND ',
    );
    // The actor's name as it is now: a member's email (none once removed), a key's label
    // (its label when it acted when it has none now, else its prefix).
    const rows = await this.db.rows<AuditListRecord>(
      sql`SELECT ${AUDIT_COLUMNS},
                 CASE a.actor_type WHEN 'console_user' THEN u.email
                                   WHEN 'api_key' THEN COALESCE(NULLIF(k.label, ''), a.actor_label, k.prefix) END AS "actorName"
            FROM audit_events a
            LEFT JOIN console_users u ON a.actor_type = 'console_user' AND u.id = a.actor_id AND u.organization_id = a.organization_id
            LEFT JOIN api_keys k ON a.actor_type = 'api_key' AND k.id = a.actor_id
           WHERE ${where} ${page.tail}`,
    );
    return page.cut(rows, recordCreationPosition);
  }

  /** Retention: deletes up to `batch` of the oldest entries created before `before`; how many it deleted. */
  @GenerateSql({ params: [DummyValue.DATE, 1000] })
  async prune(before: Date, batch: number): Promise<number> {
    return this.db.execute(sql`
      DELETE FROM audit_events WHERE id IN (
        SELECT id FROM audit_events WHERE created_at < ${before.toISOString()}::timestamptz ORDER BY created_at LIMIT ${batch})`);
  }
}
