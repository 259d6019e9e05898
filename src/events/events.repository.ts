import { Injectable } from '@nestjs/common';
import { creationPosition, keyset, type Keyset, type KeysetOrder, type PageQuery } from '../common/pagination';
import { isUuid } from '../common/parse-id.pipe';
import { Database, type Tx } from '../database/database';
import { DummyValue, GenerateSql } from '../database/generate-sql';
import type { RowOf } from '../database/row';
import { sql, type Sql } from '../database/sql';
import { WriteShape, type WriteBatch } from '../database/write-batch';
import type { DeliveryAttempt } from './delivery-attempt.entity';
import type { Delivery, DeliveryStatus } from './delivery.entity';
import { ORGANIZATION_ONLY_TYPES, type EventType } from './event-types';
import type { OutboxEvent } from './outbox-event.entity';
import type { PushVersion } from './push-notifications';
import type { Webhook, WebhookStatus } from './webhook.entity';
import type { DeliveryRow, WebhookRow } from './webhook-records';

/** A delivery shows at most this many of its attempts (the most recent). */
const ATTEMPTS_SHOWN = 20;

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

/** An outbox row as the feed reads it: the envelope's columns and the stream position. */
export type FeedRow = Pick<
  RowOf<OutboxEvent>,
  'id' | 'type' | 'created_at' | 'organization_id' | 'data' | 'txid' | 'seq'
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

/** What a claim asks for (DeliveryQueue.claim computes it from the dispatcher's fair shares). */
export interface ClaimRequest {
  limit: number;
  leaseMs: number;
  heldDestinations: readonly string[];
  heldDestinationCounts: readonly number[];
  heldOrganizations: readonly string[];
  heldOrganizationCounts: readonly number[];
  organizationShare: number;
  failingShare: number;
  scan: number;
  fullDestinations: readonly string[];
  fullOrganizations: readonly string[];
}

/** A claimed delivery with its target: the webhook and the event, or the push notification config. */
export type ClaimedRow = Pick<RowOf<Delivery>, 'id' | 'push_task_id' | 'push_config_id' | 'push_seq'> & {
  attempt: number;
  interrupted: boolean;
  webhook_id: string | null;
  webhook_url: string | null;
  secret: string | null;
  previous_secret: string | null;
  event_id: string | null;
  event_type: EventType | null;
  organization_id: string | null;
  event_created_at: Date | null;
  data: Record<string, unknown> | null;
  /** The change's `traceparent`: the event's, or the push delivery's own. */
  traceparent: string | null;
  push_url: string | null;
  token: string | null;
  authentication: { scheme: string; credentials: string } | null;
  protocol_version: PushVersion | null;
  owner_deleted: boolean | null;
  destination: string;
  fair_organization: string;
  share: number;
};

/** One attempt's log entry. */
export type AttemptLog = Pick<
  DeliveryAttempt,
  'deliveryId' | 'attempt' | 'succeeded' | 'statusCode' | 'error' | 'durationMs'
>;

/** The outcome written on a claimed delivery (only while that claim still holds it). */
export interface DeliveryResult {
  id: string;
  attempt: number;
  status: DeliveryStatus;
  /** The wait before the next attempt of a pending delivery; null for a finished one. */
  delayMs: number | null;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

export interface NewWebhook {
  organizationId: string;
  identityId: string | null;
  url: string;
  events: string[];
  description: string;
  secret: string;
}

/** The columns a PATCH may change. */
export type WebhookChanges = Partial<Pick<Webhook, 'url' | 'events' | 'description' | 'status' | 'failingSince'>>;

/** What a caller may see: its organization's webhooks, or for an agent key only its own identity's. */
export interface WebhookScope {
  organizationId: string;
  identityId: string | null;
}

export interface WebhookFilter {
  status?: WebhookStatus;
  /** The identity a webhook is scoped to, by handle or id. */
  identity?: string;
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
const FEED_COLUMNS = sql.raw(
  'e.id, e.type, e.created_at, e.organization_id, e.data, e.txid::text AS txid, e.seq::text AS seq',
);

function feedScope(scope: FeedScope): Sql {
  const organization = sql`e.organization_id = ${scope.organizationId}::uuid`;
  if (scope.identityId === null) return organization;
  return sql`${organization} AND ${scope.identityId}::uuid = ANY(e.identity_ids) AND NOT e.type = ANY(${ORGANIZATION_ONLY_TYPES}::text[])`;
}

const byTypes = (types: readonly EventType[] | null): Sql => (types ? sql`e.type = ANY(${types}::text[])` : sql.empty);

/**
 * Read model: a webhook with the handle of the identity it is scoped to
 * (`identities` belongs to the identities module). Kept as one statement so that a
 * list filters by handle and pages in one round trip; the events module sits below
 * identities in the module graph (identities emit events). Never the secret.
 */
const SELECT_WEBHOOK = sql`
  SELECT w.id, w.organization_id, w.identity_id, i.agent_handle AS identity_handle, w.url, w.events, w.description,
         w.status, w.failing_since, w.previous_secret_expires_at, w.created_at, w.updated_at
    FROM webhooks w LEFT JOIN identities i ON i.id = w.identity_id`;

/**
 * A delivery with its most recent attempts, read by one statement so that both come
 * from one snapshot (an attempt is never shown without the outcome it recorded).
 */
const SELECT_DELIVERY = sql`
  SELECT d.id, d.webhook_id, d.event_id, e.type AS event_type, d.status, d.attempts, d.next_attempt_at, d.last_attempt_at,
         d.last_status_code, d.last_error, d.last_duration_ms, d.created_at, d.updated_at,
         (SELECT COALESCE(json_agg(a ORDER BY a.attempt), '[]'::json)
            FROM (SELECT attempt, succeeded, status_code, error, duration_ms, created_at
                    FROM delivery_attempts WHERE delivery_id = d.id ORDER BY attempt DESC LIMIT ${sql.raw(String(ATTEMPTS_SHOWN))}) a
         ) AS recent_attempts
    FROM deliveries d JOIN events e ON e.id = d.event_id`;

const INSERT_ATTEMPT = sql`INSERT INTO delivery_attempts (delivery_id, attempt, succeeded, status_code, error, duration_ms)`;
/** A late result replaces the `interrupted` entry a later claim wrote for the same attempt. */
const REPLACING_INTERRUPTED = sql`
  ON CONFLICT (delivery_id, attempt) DO UPDATE
     SET succeeded = EXCLUDED.succeeded, status_code = EXCLUDED.status_code, error = EXCLUDED.error,
         duration_ms = EXCLUDED.duration_ms, created_at = now()`;

const SCOPE_EXAMPLE: FeedScope = { organizationId: DummyValue.UUID, identityId: null };
const AGENT_SCOPE_EXAMPLE: FeedScope = { organizationId: DummyValue.UUID, identityId: DummyValue.UUID_2 };
const CLAIM_EXAMPLE: ClaimRequest = {
  limit: 10,
  leaseMs: 15_000,
  heldDestinations: ['d'],
  heldDestinationCounts: [1],
  heldOrganizations: ['o'],
  heldOrganizationCounts: [1],
  organizationShare: 5,
  failingShare: 1,
  scan: 40,
  fullDestinations: [],
  fullOrganizations: [],
};
const RESULT_EXAMPLE: DeliveryResult = {
  id: DummyValue.UUID,
  attempt: 1,
  status: 'pending',
  delayMs: 1000,
  statusCode: 500,
  error: 'HTTP 500',
  durationMs: 12,
};

/**
 * The events module's tables: events (the outbox), webhooks, deliveries and
 * delivery_attempts. Two statements also read other modules' tables for speed, as
 * named read models (the outbox insert's fan-out and the claim); see their comments.
 */
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

@Injectable()
export class EventsRepository {
  constructor(private readonly db: Database) {}

  // events (the outbox)

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
  ): Promise<Array<FeedRow & { visible: boolean }>> {
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
  ): Promise<{ items: FeedRow[]; nextCursor: string | null }> {
    const from = filter.from
      ? sql`(e.txid, e.seq) > (${filter.from.txid}::xid8, ${filter.from.seq}::bigint)`
      : sql.empty;
    const rows = await this.db.rows<FeedRow>(sql`
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

  // deliveries (the dispatchers' queue)

  /**
   * Read model: claims due deliveries, fairly, with their targets. Each delivery has
   * a destination (its webhook, or its push notification config) and an organization
   * (the webhook's, or the task requester's: `tasks`, the ledger's). The claim picks,
   * oldest due first, only rows within the room each destination and organization
   * still has; destinations and organizations already at their share are skipped by
   * the scan itself, so a backlog of theirs cannot hide other work behind it; the scan
   * reads at most `scan` due rows beyond them.
   *
   * The rows picked are then locked, skipping rows another dispatcher holds (and,
   * re-checked under the lock, rows it has just claimed), so concurrent claims never
   * overlap; the UPDATE counts the attempt and leases the row (next_attempt_at moves
   * to the end of the lease). A row still `in_flight` when it falls due again was
   * claimed by a dispatcher that stopped before recording a result: its lease has run
   * out. The target comes with it: the webhook and the event, or the push
   * notification config (`push_notification_configs`, the ledger's, and its owner's
   * status in `identities`: push notifications ride on this engine; the foreign key
   * deletes their deliveries with the config). One statement, its own transaction,
   * on every claim: the joins stay here for speed.
   */
  @GenerateSql({ params: [CLAIM_EXAMPLE] })
  async claimDeliveries(claim: ClaimRequest): Promise<ClaimedRow[]> {
    const share = sql`CASE WHEN cw.failing_since IS NOT NULL THEN ${claim.failingShare}::int ELSE ${claim.organizationShare}::int END`;
    return this.db.rows<ClaimedRow>(sql`
      UPDATE deliveries d
         SET attempts = d.attempts + 1, in_flight = true, updated_at = now(),
             next_attempt_at = now() + ${claim.leaseMs} * interval '1 millisecond'
        FROM (
          WITH held_destination AS (SELECT * FROM unnest(${[...claim.heldDestinations]}::text[], ${[...claim.heldDestinationCounts]}::int[]) AS h(destination, n)),
               held_organization AS (SELECT * FROM unnest(${[...claim.heldOrganizations]}::text[], ${[...claim.heldOrganizationCounts]}::int[]) AS h(organization, n)),
          candidates AS (
            SELECT c.id, c.next_attempt_at, c.destination, c.organization,
                   c.share - COALESCE(hd.n, 0) AS destination_room, ${claim.organizationShare}::int - COALESCE(ho.n, 0) AS organization_room
              FROM (SELECT q.id, q.next_attempt_at,
                           COALESCE(q.webhook_id::text, q.push_task_id::text || ' ' || q.push_config_id) AS destination,
                           COALESCE(cw.organization_id::text, ct.requester_organization_id::text, 'task ' || q.push_task_id::text) AS organization,
                           ${share} AS share
                      FROM deliveries q
                      LEFT JOIN webhooks cw ON cw.id = q.webhook_id
                      LEFT JOIN tasks ct ON ct.id = q.push_task_id
                     WHERE q.status = 'pending' AND q.next_attempt_at <= now()
                       AND NOT (COALESCE(q.webhook_id::text, q.push_task_id::text || ' ' || q.push_config_id) = ANY(${[...claim.fullDestinations]}::text[]))
                       AND NOT (COALESCE(cw.organization_id::text, ct.requester_organization_id::text, 'task ' || q.push_task_id::text) = ANY(${[...claim.fullOrganizations]}::text[]))
                     ORDER BY q.next_attempt_at
                     LIMIT ${claim.scan}) c
              LEFT JOIN held_destination hd ON hd.destination = c.destination
              LEFT JOIN held_organization ho ON ho.organization = c.organization
          ), ranked AS (
            SELECT id, next_attempt_at, destination_room, organization_room,
                   row_number() OVER (PARTITION BY destination ORDER BY next_attempt_at, id) AS nth_destination,
                   row_number() OVER (PARTITION BY organization ORDER BY next_attempt_at, id) AS nth_organization
              FROM candidates
          ), picked AS (
            SELECT id FROM ranked
             WHERE nth_destination <= destination_room AND nth_organization <= organization_room
             ORDER BY next_attempt_at
             LIMIT ${claim.limit}
          )
          SELECT q.id, q.in_flight AS interrupted, q.webhook_id, q.event_id, q.push_task_id, q.push_config_id
            FROM deliveries q
           WHERE q.id IN (SELECT id FROM picked) AND q.status = 'pending' AND q.next_attempt_at <= now()
             FOR UPDATE OF q SKIP LOCKED) due
             LEFT JOIN webhooks w ON w.id = due.webhook_id
             LEFT JOIN events e ON e.id = due.event_id
             LEFT JOIN push_notification_configs p ON p.task_id = due.push_task_id AND p.config_id = due.push_config_id
             LEFT JOIN identities o ON o.id = p.owner_identity_id
             LEFT JOIN tasks pt ON pt.id = due.push_task_id
       WHERE d.id = due.id
      RETURNING d.id, d.attempts AS attempt, due.interrupted,
                w.id AS webhook_id, w.url AS webhook_url, w.secret,
                CASE WHEN w.previous_secret_expires_at > now() THEN w.previous_secret END AS previous_secret,
                e.id AS event_id, e.type AS event_type, e.organization_id, e.created_at AS event_created_at, e.data,
                COALESCE(e.traceparent, d.traceparent) AS traceparent,
                d.push_task_id, d.push_config_id, d.push_seq, p.url AS push_url, p.token, p.authentication, p.protocol_version,
                (o.status = 'deleted') AS owner_deleted,
                COALESCE(w.id::text, d.push_task_id::text || ' ' || d.push_config_id) AS destination,
                COALESCE(w.organization_id::text, pt.requester_organization_id::text, 'task ' || d.push_task_id::text) AS fair_organization,
                CASE WHEN w.failing_since IS NOT NULL THEN ${claim.failingShare}::int ELSE ${claim.organizationShare}::int END AS share`);
  }

  /**
   * Logs an attempt of a delivery that still exists (its webhook may have been
   * deleted meanwhile). `replace`: a late result replaces the `interrupted` entry a
   * later claim wrote for the same attempt; otherwise an existing entry stays.
   */
  @GenerateSql(
    {
      name: 'result',
      params: [
        {
          deliveryId: DummyValue.UUID,
          attempt: 1,
          succeeded: false,
          statusCode: 500,
          error: 'HTTP 500',
          durationMs: 12,
        },
        true,
      ],
    },
    {
      name: 'interrupted',
      params: [
        {
          deliveryId: DummyValue.UUID,
          attempt: 1,
          succeeded: false,
          statusCode: null,
          error: 'interrupted',
          durationMs: 0,
        },
        false,
      ],
    },
  )
  async logAttempt(log: AttemptLog, replace: boolean, tx?: Tx): Promise<void> {
    await this.db.execute(
      sql`
      ${INSERT_ATTEMPT} SELECT d.id, ${log.attempt}, ${log.succeeded}, ${log.statusCode}, ${log.error}, ${log.durationMs}
        FROM deliveries d WHERE d.id = ${log.deliveryId} ${replace ? REPLACING_INTERRUPTED : sql`ON CONFLICT DO NOTHING`}`,
      tx,
    );
  }

  /**
   * A success in one statement (the hot path): the delivery is finished while this
   * claim still holds it, the endpoint's failing run ends, and the attempt is logged.
   */
  @GenerateSql({ params: [{ id: DummyValue.UUID, attempt: 1, statusCode: 200, durationMs: 12 }, DummyValue.UUID_2] })
  async recordSuccess(
    delivery: { id: string; attempt: number; statusCode: number | null; durationMs: number },
    webhookId: string | null,
  ): Promise<void> {
    await this.db.execute(sql`
      WITH finished AS (
        UPDATE deliveries
           SET status = 'succeeded', in_flight = false, next_attempt_at = NULL, updated_at = now(),
               last_attempt_at = now(), last_status_code = ${delivery.statusCode}, last_error = NULL, last_duration_ms = ${delivery.durationMs}
         WHERE id = ${delivery.id} AND attempts = ${delivery.attempt} AND in_flight
      ), recovered AS (
        UPDATE webhooks SET failing_since = NULL WHERE id = ${webhookId} AND failing_since IS NOT NULL
      )
      ${INSERT_ATTEMPT} SELECT d.id, ${delivery.attempt}, true, ${delivery.statusCode}, NULL, ${delivery.durationMs}
        FROM deliveries d WHERE d.id = ${delivery.id} ${REPLACING_INTERRUPTED}`);
  }

  /** Writes a claimed delivery's outcome, while that claim still holds it. */
  @GenerateSql({ params: [RESULT_EXAMPLE] })
  async finishDelivery(result: DeliveryResult, tx?: Tx): Promise<void> {
    await this.db.execute(
      sql`
      UPDATE deliveries
         SET status = ${result.status}, in_flight = false, updated_at = now(),
             next_attempt_at = now() + ${result.delayMs} * interval '1 millisecond',
             last_attempt_at = now(), last_status_code = ${result.statusCode}, last_error = ${result.error}, last_duration_ms = ${result.durationMs}
       WHERE id = ${result.id} AND attempts = ${result.attempt} AND in_flight`,
      tx,
    );
  }

  /** A disabled webhook's waiting deliveries fail (each can be retried once it is enabled again). Returns how many. */
  @GenerateSql({ params: [DummyValue.UUID] })
  async failPendingDeliveries(webhookId: string, tx?: Tx): Promise<number> {
    return this.db.execute(
      sql`
      UPDATE deliveries
         SET status = 'failed', next_attempt_at = NULL, updated_at = now(),
             last_error = COALESCE(last_error, 'the webhook was disabled')
       WHERE webhook_id = ${webhookId} AND status = 'pending' AND NOT in_flight`,
      tx,
    );
  }

  /** Makes a delivery of the webhook due now, unless a dispatcher holds it; false when none was. */
  @GenerateSql({ params: [DummyValue.UUID, DummyValue.UUID_2] })
  async requeueDelivery(deliveryId: string, webhookId: string, tx?: Tx): Promise<boolean> {
    const rows = await this.db.rows<Pick<RowOf<Delivery>, 'id'>>(
      sql`
      UPDATE deliveries SET status = 'pending', next_attempt_at = now(), updated_at = now()
       WHERE id = ${deliveryId} AND webhook_id = ${webhookId} AND NOT in_flight
      RETURNING id`,
      tx,
    );
    return rows.length > 0;
  }

  /** Whether the webhook's delivery is held by a dispatcher; null when the webhook has no such delivery. */
  @GenerateSql({ params: [DummyValue.UUID, DummyValue.UUID_2] })
  async deliveryInFlight(deliveryId: string, webhookId: string, tx?: Tx): Promise<boolean | null> {
    const row = await this.db.one<Pick<RowOf<Delivery>, 'in_flight'>>(
      sql`
      SELECT in_flight FROM deliveries WHERE id = ${deliveryId} AND webhook_id = ${webhookId}`,
      tx,
    );
    return row ? row.in_flight : null;
  }

  /** A delivery as the API shows it, with its most recent attempts. */
  @GenerateSql({ params: [DummyValue.UUID] })
  async delivery(id: string): Promise<DeliveryRow | null> {
    return this.db.one<DeliveryRow>(sql`${SELECT_DELIVERY} WHERE d.id = ${id}`);
  }

  /** The delivery of an event to a webhook (a ping's). */
  @GenerateSql({ params: [DummyValue.UUID, 'evt_example'] })
  async deliveryOfEvent(webhookId: string, eventId: string): Promise<DeliveryRow | null> {
    return this.db.one<DeliveryRow>(
      sql`${SELECT_DELIVERY} WHERE d.webhook_id = ${webhookId} AND d.event_id = ${eventId}`,
    );
  }

  /** A page of a webhook's deliveries, newest first. */
  @GenerateSql({ params: [DummyValue.UUID, 'failed', { limit: 50 }] })
  async listDeliveries(
    webhookId: string,
    status: DeliveryStatus | undefined,
    query: PageQuery,
  ): Promise<{ items: DeliveryRow[]; nextCursor: string | null }> {
    const page = keyset('d', query);
    const rows = await this.db.rows<DeliveryRow>(sql`
      ${SELECT_DELIVERY} ${sql.where([sql`d.webhook_id = ${webhookId}`, status ? sql`d.status = ${status}` : sql.empty, page.after])} ${page.tail}`);
    return page.cut(rows, creationPosition);
  }

  // webhooks

  /** The webhook with its identity's handle (whose it is, requireAccess decides); locked for the transaction with `lock`. */
  @GenerateSql({ name: 'read', params: [DummyValue.UUID, false] }, { name: 'locked', params: [DummyValue.UUID, true] })
  async findWebhook(id: string, lock: boolean, tx?: Tx): Promise<WebhookRow | null> {
    return this.db.one<WebhookRow>(
      sql`${SELECT_WEBHOOK} WHERE w.id = ${id} ${lock ? sql`FOR UPDATE OF w` : sql.empty}`,
      tx,
    );
  }

  /** A page of the scope's webhooks, newest first (the `identity` filter takes a handle or an id). */
  @GenerateSql(
    {
      name: 'by handle',
      params: [
        { organizationId: DummyValue.UUID, identityId: null },
        { status: 'active', identity: DummyValue.HANDLE },
        { limit: 50 },
      ],
    },
    {
      name: 'agent',
      params: [
        { organizationId: DummyValue.UUID, identityId: DummyValue.UUID_2 },
        { identity: DummyValue.UUID_2 },
        { limit: 50 },
      ],
    },
  )
  async listWebhooks(
    scope: WebhookScope,
    filter: WebhookFilter,
    query: PageQuery,
  ): Promise<{ items: WebhookRow[]; nextCursor: string | null }> {
    const page = keyset('w', query);
    const identity =
      filter.identity === undefined
        ? sql.empty
        : isUuid(filter.identity)
          ? sql`w.identity_id = ${filter.identity}::uuid`
          : sql`i.agent_handle = ${filter.identity}`;
    const rows = await this.db.rows<WebhookRow>(sql`
      ${SELECT_WEBHOOK} ${sql.where([
        sql`w.organization_id = ${scope.organizationId}`,
        scope.identityId ? sql`w.identity_id = ${scope.identityId}` : sql.empty,
        filter.status ? sql`w.status = ${filter.status}` : sql.empty,
        identity,
        page.after,
      ])} ${page.tail}`);
    return page.cut(rows, creationPosition);
  }

  @GenerateSql({ params: [DummyValue.UUID] })
  async countWebhooks(organizationId: string, tx?: Tx): Promise<number> {
    const row = await this.db.one<{ count: number }>(
      sql`SELECT count(*)::int AS count FROM webhooks WHERE organization_id = ${organizationId}`,
      tx,
    );
    return row!.count;
  }

  /** Inserts an active webhook; returns its id. */
  @GenerateSql({
    params: [
      {
        organizationId: DummyValue.UUID,
        identityId: null,
        url: 'https://example.com/hook',
        events: ['*'],
        description: '',
        secret: 'whsec_example',
      },
    ],
  })
  async insertWebhook(webhook: NewWebhook, tx?: Tx): Promise<string> {
    const row = await this.db.one<Pick<RowOf<Webhook>, 'id'>>(
      sql`
      INSERT INTO webhooks (organization_id, identity_id, url, events, description, secret, status)
      VALUES (${webhook.organizationId}, ${webhook.identityId}, ${webhook.url}, ${webhook.events}::text[], ${webhook.description}, ${webhook.secret}, 'active')
      RETURNING id`,
      tx,
    );
    return row!.id;
  }

  /** Changes the given columns (none: nothing is written). */
  @GenerateSql({
    params: [
      DummyValue.UUID,
      { url: 'https://example.com/hook', events: ['*'], description: 'x', status: 'active', failingSince: null },
    ],
  })
  async updateWebhook(id: string, changes: WebhookChanges, tx?: Tx): Promise<void> {
    const set = sql.join([
      changes.url !== undefined ? sql`url = ${changes.url}` : sql.empty,
      changes.events !== undefined ? sql`events = ${changes.events}::text[]` : sql.empty,
      changes.description !== undefined ? sql`description = ${changes.description}` : sql.empty,
      changes.status !== undefined ? sql`status = ${changes.status}` : sql.empty,
      changes.failingSince !== undefined ? sql`failing_since = ${changes.failingSince}` : sql.empty,
    ]);
    if (set.isEmpty) return;
    await this.db.execute(sql`UPDATE webhooks SET ${set}, updated_at = now() WHERE id = ${id}`, tx);
  }

  /** Its deliveries and their log go with it (by cascade). */
  @GenerateSql({ params: [DummyValue.UUID] })
  async deleteWebhook(id: string, tx?: Tx): Promise<void> {
    await this.db.execute(sql`DELETE FROM webhooks WHERE id = ${id}`, tx);
  }

  /** A new signing secret; the previous one keeps signing for `overlapMs`. */
  @GenerateSql({ params: [DummyValue.UUID, 86_400_000, 'whsec_example'] })
  async rotateWebhookSecret(id: string, overlapMs: number, secret: string, tx?: Tx): Promise<void> {
    await this.db.execute(
      sql`
      UPDATE webhooks
         SET previous_secret = secret, previous_secret_expires_at = now() + ${overlapMs} * interval '1 millisecond',
             secret = ${secret}, updated_at = now()
       WHERE id = ${id}`,
      tx,
    );
  }

  /** A failing webhook's state, locked for the transaction: whether its failing run has lasted `disableAfterMs`. */
  @GenerateSql({ params: [DummyValue.UUID, 432_000_000] })
  async lockWebhookFailing(
    webhookId: string,
    disableAfterMs: number,
    tx?: Tx,
  ): Promise<{ status: WebhookStatus; expired: boolean | null } | null> {
    return this.db.one(
      sql`
      SELECT status, (failing_since <= now() - ${disableAfterMs} * interval '1 millisecond') AS expired FROM webhooks WHERE id = ${webhookId} FOR UPDATE`,
      tx,
    );
  }

  /** Starts the webhook's failing run, unless one is running. */
  @GenerateSql({ params: [DummyValue.UUID] })
  async markWebhookFailing(webhookId: string, tx?: Tx): Promise<void> {
    await this.db.execute(
      sql`UPDATE webhooks SET failing_since = COALESCE(failing_since, now()) WHERE id = ${webhookId}`,
      tx,
    );
  }

  @GenerateSql({ params: [DummyValue.UUID] })
  async disableWebhook(webhookId: string, tx?: Tx): Promise<void> {
    await this.db.execute(sql`UPDATE webhooks SET status = 'disabled', updated_at = now() WHERE id = ${webhookId}`, tx);
  }

  /**
   * Retention: deletes up to `batch` finished push notification deliveries (and, by
   * cascade, their attempt logs) last updated more than `days` ago — webhook deliveries
   * go with their events (pruneEvents); how many went.
   */
  @GenerateSql({ params: [30, 500] })
  async prunePushDeliveries(days: number, batch: number): Promise<number> {
    return this.db.execute(sql`
      DELETE FROM deliveries WHERE id IN (
        SELECT id FROM deliveries
         WHERE push_task_id IS NOT NULL AND status <> 'pending' AND updated_at < now() - make_interval(days => ${days}::int)
         LIMIT ${batch} FOR UPDATE SKIP LOCKED)`);
  }
}
