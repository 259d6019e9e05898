import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { badRequest } from '../common/app-error';
import { decodeCursor, pageOf, type KeysetCursor } from '../common/pagination';
import type { Envelope } from './delivery-queue';
import { ORGANIZATION_ONLY_TYPES, type EventType } from './event-types';

/**
 * Whose events a reader sees (CONTRACT §14): an organization's, or — for an agent
 * key — only those about its identity, without the organization-only types
 * (api_key.*), exactly as an identity-scoped webhook would receive them.
 */
export interface FeedScope {
  organizationId: string;
  identityId: string | null;
}

/**
 * A place in the stream: the writing transaction's id and the row's number (see
 * migration 1763700900000). Both are kept as decimal strings (xid8 and bigint).
 */
export interface FeedPosition {
  txid: string;
  seq: string;
}

export interface FeedEvent {
  envelope: Envelope;
  position: FeedPosition;
}

interface FeedRow {
  id: string;
  type: EventType;
  created_at: Date;
  organization_id: string;
  data: Record<string, unknown>;
  txid: string;
  seq: string;
  visible?: boolean;
}

const COLUMNS = `e.id, e.type, e.created_at, e.organization_id, e.data, e.txid::text AS txid, e.seq::text AS seq`;
/** Every transaction below it has finished: rows under it can never be joined by an earlier one. */
const HORIZON = `pg_snapshot_xmin(pg_current_snapshot())`;
const DECIMAL = /^\d{1,20}$/;

const envelopeOf = (row: FeedRow): Envelope => ({
  id: row.id, type: row.type, created_at: row.created_at.toISOString(), organization_id: row.organization_id, data: row.data,
});
const positionOf = (row: FeedRow): FeedPosition => ({ txid: row.txid, seq: row.seq });

/**
 * Reads of the outbox in commit order, for the event list and the event stream.
 * Only rows below the visibility horizon are ever shown, so a reader that resumes
 * after a position sees every event committed since, once — even one whose id was
 * allocated before the position's. A transaction still open holds the horizon
 * back (its events, and those committed after it, wait until it ends); rows held
 * back are reported, so a stream looks again shortly instead of at its next wake.
 */
@Injectable()
export class EventFeed {
  constructor(private readonly dataSource: DataSource) {}

  /** Where an event sits in the stream; 400 when the scope has no such event (never seen, or past retention). */
  async positionOf(scope: FeedScope, eventId: string): Promise<FeedPosition> {
    const params: unknown[] = [eventId];
    const [row] = (await this.dataSource.query(
      `SELECT e.txid::text AS txid, e.seq::text AS seq FROM events e WHERE e.id = $1 AND ${scopeSql(scope, params)}`, params,
    )) as FeedPosition[];
    if (!row) {
      throw badRequest('unknown_event', 'No event you can see has that id (it may be older than the retention period); list the events to find a recent one.');
    }
    return row;
  }

  /** The stream's "now": every event committed from here on sorts after it. */
  async horizon(): Promise<FeedPosition> {
    const [row] = (await this.dataSource.query(`SELECT ${HORIZON}::text AS txid`)) as Array<{ txid: string }>;
    return { txid: row.txid, seq: '0' };
  }

  /**
   * Up to `limit` events after `after`, oldest first; `held` when committed events
   * exist beyond the horizon (look again soon).
   */
  async after(scope: FeedScope, after: FeedPosition, types: readonly EventType[] | null, limit: number): Promise<{ events: FeedEvent[]; held: boolean }> {
    const params: unknown[] = [after.txid, after.seq];
    const conditions = [`(e.txid, e.seq) > ($1::xid8, $2::bigint)`, scopeSql(scope, params)];
    if (types) conditions.push(`e.type = ANY($${params.push(types)}::text[])`);
    const rows = (await this.dataSource.query(
      `SELECT ${COLUMNS}, e.txid < ${HORIZON} AS visible FROM events e WHERE ${conditions.join(' AND ')}
        ORDER BY e.txid, e.seq LIMIT $${params.push(limit)}`, params,
    )) as FeedRow[];
    const shown = rows.findIndex((row) => !row.visible);
    const visible = shown === -1 ? rows : rows.slice(0, shown);
    return { events: visible.map((row) => ({ envelope: envelopeOf(row), position: positionOf(row) })), held: shown !== -1 };
  }

  /** `GET /api/v1/events`: newest first, a keyset page in stream order. */
  async list(scope: FeedScope, filter: { types: readonly EventType[] | null; after: string | undefined; limit: number; cursor: string | undefined }): Promise<{ events: Envelope[]; next_cursor: string | null }> {
    const cursor = decodeCursor(filter.cursor, (txid, seq) => DECIMAL.test(txid as string) && DECIMAL.test(seq as string));
    const from = filter.after === undefined ? null : await this.positionOf(scope, filter.after);
    const params: unknown[] = [];
    const conditions = [scopeSql(scope, params), `e.txid < ${HORIZON}`];
    if (filter.types) conditions.push(`e.type = ANY($${params.push(filter.types)}::text[])`);
    if (from) conditions.push(`(e.txid, e.seq) > ($${params.push(from.txid)}::xid8, $${params.push(from.seq)}::bigint)`);
    if (cursor) conditions.push(`(e.txid, e.seq) < ($${params.push(cursor.at)}::xid8, $${params.push(cursor.id)}::bigint)`);
    const rows = (await this.dataSource.query(
      `SELECT ${COLUMNS} FROM events e WHERE ${conditions.join(' AND ')} ORDER BY e.txid DESC, e.seq DESC LIMIT $${params.push(filter.limit + 1)}`,
      params,
    )) as FeedRow[];
    const page = pageOf(rows, filter.limit, (row): KeysetCursor => ({ at: row.txid, id: row.seq }));
    return { events: page.items.map(envelopeOf), next_cursor: page.nextCursor };
  }

  /**
   * Retention (`EVENTS_RETENTION_DAYS`): deletes up to `batch` events older than
   * `days`, with their finished webhook deliveries (and, by cascade, their attempt
   * logs). An event with a delivery still pending stays until it is done. Returns
   * how many events went.
   */
  async prune(days: number, batch: number): Promise<number> {
    const [{ count }] = (await this.dataSource.query(
      `WITH doomed AS (
         SELECT e.id FROM events e
          WHERE e.created_at < now() - make_interval(days => $1::int)
            AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id AND d.status = 'pending')
          ORDER BY e.created_at LIMIT $2
            FOR UPDATE SKIP LOCKED
       ), deliveries_gone AS (
         DELETE FROM deliveries d USING doomed WHERE d.event_id = doomed.id
       ), gone AS (
         DELETE FROM events e USING doomed WHERE e.id = doomed.id RETURNING 1
       )
       SELECT count(*)::int AS count FROM gone`,
      [days, batch],
    )) as Array<{ count: number }>;
    return count;
  }
}

function scopeSql(scope: FeedScope, params: unknown[]): string {
  const organization = `e.organization_id = $${params.push(scope.organizationId)}::uuid`;
  if (scope.identityId === null) return organization;
  return `${organization} AND $${params.push(scope.identityId)}::uuid = ANY(e.identity_ids) AND NOT e.type = ANY($${params.push(ORGANIZATION_ONLY_TYPES)}::text[])`;
}
