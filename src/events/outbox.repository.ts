import { Injectable } from '@nestjs/common';
import { keyset, type Keyset, type KeysetOrder, type PageQuery } from '../common/pagination';
import { Database, type Tx } from '../database/database';
import { DummyValue, GenerateSql } from '../database/generate-sql';
import type { RecordOf } from '../database/row';
import { sql, type Sql } from '../database/sql';
import { WriteShape, type WriteBatch } from '../database/write-batch';
import { ORGANIZATION_ONLY_TYPES, type EventType } from './event-types';
import type { OutboxEvent } from './outbox-event.entity';

/**
 * Whose events a reader sees (docs/api.md §14): an organization's, or — for an agent
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

/** An outbox event as the feed reads it: the envelope's columns and the stream position. */
export type FeedRecord = Pick<
  RecordOf<OutboxEvent>,
  'id' | 'type' | 'createdAt' | 'organizationId' | 'data' | 'txid' | 'seq'
>;

/** An event to write: the outbox row. */
export interface NewEvent {
  id: string;
  type: EventType;
  organizationId: string;
  identityIds: readonly string[];
  data: Record<string, unknown>;
  /** The change's W3C `traceparent` (sent on its deliveries); null without tracing. */
  traceparent: string | null;
}

/** One event to write, with where it goes besides the matching subscriptions and the NOTIFY it sends. */
export interface EventToWrite {
  event: NewEvent;
  /** This subscription only, whatever its filter (a webhook's `ping`); null: every matching subscription. */
  webhookId: string | null;
  /** A task update: one A2A push notification per push notification config of the task. */
  push: { taskId: string; seq: number } | null;
  /** The NOTIFY that wakes the organization's event streams after the commit. */
  notify: { channel: string; payload: string };
}

const DECIMAL = /^\d{1,20}$/;

/** The event list's order: the stream's (txid, seq), newest first. */
export const FEED_ORDER: KeysetOrder = {
  columns: [
    { name: 'txid', cast: 'xid8' },
    { name: 'seq', cast: 'bigint' },
  ],
  direction: 'DESC',
  valid: (txid, seq) => DECIMAL.test(txid as string) && DECIMAL.test(seq as string),
};

/** The page of the event list a query asks for (its cursor is checked here: a bad one is a 400). */
export function eventPage(query: PageQuery): Keyset {
  return keyset('e', query, FEED_ORDER);
}

/** Every transaction below it has finished: rows under it can never be joined by an earlier one. */
const HORIZON = sql.raw('pg_snapshot_xmin(pg_current_snapshot())');
/** Named as FeedRecord's properties, so rows arrive as records. */
const FEED_COLUMNS = sql.raw(
  `e.id, e.type, e.created_at AS "createdAt", e.organization_id AS "organizationId", e.data,
  e.txid::text AS txid, e.seq::text AS seq`,
);

function feedScope(scope: FeedScope): Sql {
  const organization = sql`e.organization_id = ${scope.organizationId}::uuid`;
  if (scope.identityId === null) {
    return organization;
  }
  return sql`${organization} AND ${scope.identityId}::uuid = ANY(e.identity_ids) AND NOT e.type = ANY(${ORGANIZATION_ONLY_TYPES}::text[])`;
}

const byTypes = (types: readonly EventType[] | null): Sql => (types ? sql`e.type = ANY(${types}::text[])` : sql.empty);

const SCOPE_EXAMPLE: FeedScope = { organizationId: DummyValue.UUID, identityId: null };

const AGENT_SCOPE_EXAMPLE: FeedScope = { organizationId: DummyValue.UUID, identityId: DummyValue.UUID_2 };

/**
 * An outbox write (insertEventsWithDeliveries) as WriteShapes: the sends that go
 * together in one statement (group commit) insert their events and deliveries as one
 * INSERT each; the rows each asks for come back to it by the event's id or the task's.
 */
const NEW_EVENTS = new WriteShape(
  {
    i: [
      ['id', 'varchar'],
      ['type', 'varchar'],
      ['organization_id', 'uuid'],
      ['identity_ids', 'text'],
      ['data', 'text'],
      ['traceparent', 'varchar'],
    ],
    n: [
      ['id', 'varchar'],
      ['channel', 'text'],
      ['payload', 'text'],
    ],
  },
  ({ i, n }) => sql`INSERT INTO events (id, type, organization_id, identity_ids, data, traceparent)
    SELECT i.id, i.type, i.organization_id, i.identity_ids::uuid[], i.data::json, i.traceparent FROM ${i} ORDER BY i.ord
    RETURNING id, (SELECT pg_notify(n.channel, n.payload) FROM ${n} WHERE n.id = events.id) AS notified`,
  { returned: 'id', set: 'i', column: 'id' },
);
/** What the deliveries of events are made from. */
const DELIVERY_INPUT = [
  ['id', 'varchar'],
  ['type', 'varchar'],
  ['organization_id', 'uuid'],
  ['identity_ids', 'text'],
  ['traceparent', 'varchar'],
  ['webhook_id', 'uuid'],
  ['push_task_id', 'uuid'],
  ['push_seq', 'int'],
] as const;
const PUSH_DELIVERIES = new WriteShape(
  { i: DELIVERY_INPUT },
  ({ i }) => sql`INSERT INTO deliveries (push_task_id, push_config_id, push_seq, traceparent)
    SELECT c.task_id, c.config_id, i.push_seq, i.traceparent
      FROM ${i} JOIN push_notification_configs c ON c.task_id = i.push_task_id JOIN identities o ON o.id = c.owner_identity_id
     WHERE o.status = 'active'
    RETURNING id, push_task_id`,
  { returned: 'push_task_id', set: 'i', column: 'push_task_id' },
);
const WEBHOOK_DELIVERIES = new WriteShape(
  { i: DELIVERY_INPUT },
  ({ i }) => sql`INSERT INTO deliveries (webhook_id, event_id)
    SELECT w.id, i.id
      FROM ${i} JOIN webhooks w ON w.organization_id = i.organization_id AND w.status = 'active'
     WHERE CASE WHEN i.webhook_id IS NOT NULL THEN w.id = i.webhook_id
                ELSE ('*' = ANY(w.events) OR i.type = ANY(w.events))
                 AND (w.identity_id IS NULL OR (w.identity_id = ANY(i.identity_ids::uuid[]) AND NOT i.type = ANY(${ORGANIZATION_ONLY_TYPES}::text[])))
           END
    RETURNING id, event_id`,
  { returned: 'event_id', set: 'i', column: 'id' },
);

/**
 * The events table (the outbox): the events of every change written with their
 * deliveries (a named read model, see its comment), the event feed's reads in stream
 * order, and retention's prune.
 */
@Injectable()
export class OutboxRepository {
  constructor(private readonly db: Database) {}

  /**
   * Read model: writes the events of one change and their deliveries, on the hot path
   * of every change — the outbox rows, in list order (their `seq` follows it), each
   * notifying its organization's event streams (delivered by PostgreSQL after the
   * commit, to every instance); one delivery for every active subscription of an
   * event's organization whose filter and scope match (subscriptions scoped to one
   * identity match when the event is about it; organization-only types, api_key.*,
   * never match them) or, for an event aimed at one webhook, that webhook's; and — for
   * a task update — one delivery for each of the task's A2A push notification configs
   * (`push_notification_configs`, the ledger's) whose owner (`identities`: the
   * requester who set it) has not been deleted. Three independent writes over the
   * same events (the event ids are ours, so none reads another's rows; an event's data,
   * its largest value, goes only with the events' own rows): one statement
   * in the change's transaction, or members of its write batch — a change's events
   * are one round trip however many they are. `committed` learns how many deliveries
   * were queued.
   */
  @GenerateSql({
    params: [
      [
        {
          event: {
            id: 'evt_example',
            type: 'task.message',
            organizationId: DummyValue.UUID,
            identityIds: [DummyValue.UUID_2],
            data: {},
            traceparent: null,
          },
          webhookId: null,
          push: null,
          notify: { channel: 'a2a_changes', payload: 'example:0' },
        },
        {
          event: {
            id: 'evt_example2',
            type: 'task.status',
            organizationId: DummyValue.UUID,
            identityIds: [DummyValue.UUID_2],
            data: {},
            traceparent: null,
          },
          webhookId: DummyValue.UUID_2,
          push: { taskId: DummyValue.UUID_2, seq: 2 },
          notify: { channel: 'a2a_changes', payload: 'example:0' },
        },
      ],
    ],
  })
  async insertEventsWithDeliveries(
    events: readonly EventToWrite[],
    unit?: Tx | WriteBatch,
    committed?: (deliveries: number) => void,
  ): Promise<void> {
    // The events' rows, and what their deliveries are made from: each event's data (its largest value) is sent once.
    const input = events.map((e) => [
      e.event.id,
      e.event.type,
      e.event.organizationId,
      `{${e.event.identityIds.join(',')}}`,
      e.event.traceparent,
      e.webhookId,
      e.push?.taskId ?? null,
      e.push?.seq ?? null,
    ]);
    await this.db.write(
      [
        NEW_EVENTS.of({
          i: events.map(({ event: e }) => [
            e.id,
            e.type,
            e.organizationId,
            `{${e.identityIds.join(',')}}`,
            JSON.stringify(e.data),
            e.traceparent,
          ]),
          n: events.map((e) => [e.event.id, e.notify.channel, e.notify.payload]),
        }),
        PUSH_DELIVERIES.of({ i: input }),
        WEBHOOK_DELIVERIES.of({ i: input }),
      ],
      unit,
      committed && ((rows) => committed(rows[1].length + rows[2].length)),
    );
  }

  /** Where an event sits in the stream, if the scope can see it. */
  @GenerateSql(
    { name: 'organization', params: [SCOPE_EXAMPLE, 'evt_example'] },
    { name: 'agent', params: [AGENT_SCOPE_EXAMPLE, 'evt_example'] },
  )
  async feedPosition(scope: FeedScope, eventId: string): Promise<FeedPosition | null> {
    return this.db.one<FeedPosition>(sql`
      SELECT e.txid::text AS txid, e.seq::text AS seq FROM events e WHERE e.id = ${eventId} AND ${feedScope(scope)}`);
  }

  /** The visibility horizon: the oldest transaction still open (as xid8 text). */
  @GenerateSql({ params: [] })
  async horizon(): Promise<string> {
    const row = await this.db.one<{ txid: string }>(sql`SELECT ${HORIZON}::text AS txid`);
    return row!.txid;
  }

  /** Up to `limit` events after `after` in stream order, each marked visible when below the horizon. */
  @GenerateSql({ params: [SCOPE_EXAMPLE, { txid: '1', seq: '0' }, ['task.created'], 100] })
  async eventsAfter(
    scope: FeedScope,
    after: FeedPosition,
    types: readonly EventType[] | null,
    limit: number,
  ): Promise<Array<FeedRecord & { visible: boolean }>> {
    const conditions = [
      sql`(e.txid, e.seq) > (${after.txid}::xid8, ${after.seq}::bigint)`,
      feedScope(scope),
      byTypes(types),
    ];
    return this.db.rows(sql`
      SELECT ${FEED_COLUMNS}, e.txid < ${HORIZON} AS visible FROM events e ${sql.where(conditions)}
       ORDER BY e.txid, e.seq LIMIT ${limit}`);
  }

  /** A page of the event list (`eventPage`), newest first in stream order, only rows below the horizon. */
  @GenerateSql({
    params: [AGENT_SCOPE_EXAMPLE, { types: ['task.created'], from: { txid: '1', seq: '0' } }, eventPage({ limit: 50 })],
  })
  async listEvents(
    scope: FeedScope,
    filter: { types: readonly EventType[] | null; from: FeedPosition | null },
    page: Keyset,
  ): Promise<{ items: FeedRecord[]; nextCursor: string | null }> {
    const from = filter.from
      ? sql`(e.txid, e.seq) > (${filter.from.txid}::xid8, ${filter.from.seq}::bigint)`
      : sql.empty;
    const rows = await this.db.rows<FeedRecord>(sql`
      SELECT ${FEED_COLUMNS} FROM events e
       ${sql.where([feedScope(scope), sql`e.txid < ${HORIZON}`, byTypes(filter.types), from, page.after])} ${page.tail}`);
    return page.cut(rows, (row) => ({ at: row.txid, id: row.seq }));
  }

  /**
   * Retention: deletes up to `batch` events older than `days`, with their finished
   * webhook deliveries (and, by cascade, their attempt logs). An event with a
   * delivery still pending stays until it is done. Returns how many events went.
   */
  @GenerateSql({ params: [30, 500] })
  async pruneEvents(days: number, batch: number): Promise<number> {
    const row = await this.db.one<{ count: number }>(sql`
      WITH doomed AS (
        SELECT e.id FROM events e
         WHERE e.created_at < now() - make_interval(days => ${days}::int)
           AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id AND d.status = 'pending')
         ORDER BY e.created_at LIMIT ${batch}
           FOR UPDATE SKIP LOCKED
      ), deliveries_gone AS (
        DELETE FROM deliveries d USING doomed WHERE d.event_id = doomed.id
      ), gone AS (
        DELETE FROM events e USING doomed WHERE e.id = doomed.id RETURNING 1
      )
      SELECT count(*)::int AS count FROM gone`);
    return row!.count;
  }
}
