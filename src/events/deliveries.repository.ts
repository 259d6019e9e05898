import { Injectable } from '@nestjs/common';
import { keyset, recordCreationPosition, type PageQuery } from '../common/pagination';
import { Database, type Tx } from '../database/database';
import { fairPick, type HeldKeys } from '../database/fair-pick';
import { DummyValue, GenerateSql } from '../database/generate-sql';
import type { RecordOf, RowOf } from '../database/row';
import { sql, type Sql } from '../database/sql';
import type { DeliveryAttempt } from './delivery-attempt.entity';
import type { Delivery, DeliveryStatus } from './delivery.entity';
import { type EventType } from './event-types';
import type { PushVersion } from './push-notifications';
import type { DeliveryRecord } from './webhook-records';

/** A delivery shows at most this many of its attempts (the most recent). */
const ATTEMPTS_SHOWN = 20;
/** A delivery shows the body it sends when its event's data is at most this large (bytes, as stored). */
const REQUEST_DATA_SHOWN = 8192;

/** What a claim asks for (DeliveryQueue.claim, from the dispatcher's fair shares). */
export interface ClaimRequest {
  limit: number;
  leaseMs: number;
  held: HeldKeys;
  organizationShare: number;
  failingShare: number;
}

/** A claimed delivery with its target: the webhook and the event, or the push notification config. */
export type ClaimedDeliveryRecord = Pick<RecordOf<Delivery>, 'id' | 'pushTaskId' | 'pushConfigId' | 'pushSeq'> & {
  attempt: number;
  interrupted: boolean;
  webhookId: string | null;
  webhookUrl: string | null;
  secret: string | null;
  previousSecret: string | null;
  eventId: string | null;
  eventType: EventType | null;
  organizationId: string | null;
  eventCreatedAt: Date | null;
  data: Record<string, unknown> | null;
  /** The change's `traceparent`: the event's, or the push delivery's own. */
  traceparent: string | null;
  pushUrl: string | null;
  token: string | null;
  authentication: { scheme: string; credentials: string } | null;
  protocolVersion: PushVersion | null;
  ownerDeleted: boolean | null;
  destination: string;
  fairOrganization: string;
  share: number;
};

/** One attempt's log entry. */
export type AttemptLog = Pick<
  DeliveryAttempt,
  'deliveryId' | 'attempt' | 'succeeded' | 'statusCode' | 'error' | 'durationMs'
> &
  Partial<Pick<DeliveryAttempt, 'responseHeaders' | 'responseBody'>>;

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

/**
 * A delivery with its most recent attempts, read by one statement so that both come
 * from one snapshot (an attempt is never shown without the outcome it recorded).
 * Named as DeliveryRecord's properties (its attempts as AttemptRecord's), so rows
 * arrive as records.
 */
const SELECT_DELIVERY = sql`
  SELECT d.id, d.webhook_id AS "webhookId", d.event_id AS "eventId", e.type AS "eventType", d.status, d.attempts,
         d.next_attempt_at AS "nextAttemptAt", d.last_attempt_at AS "lastAttemptAt",
         d.last_status_code AS "lastStatusCode", d.last_error AS "lastError", d.last_duration_ms AS "lastDurationMs",
         d.created_at AS "createdAt", d.updated_at AS "updatedAt",
         e.created_at AS "eventCreatedAt", e.organization_id AS "eventOrganizationId",
         CASE WHEN octet_length(e.data::text) <= ${sql.raw(String(REQUEST_DATA_SHOWN))} THEN e.data END AS "eventData",
         (SELECT COALESCE(json_agg(a ORDER BY a.attempt), '[]'::json)
            FROM (SELECT attempt, succeeded, status_code AS "statusCode", error, duration_ms AS "durationMs",
                         response_headers AS "responseHeaders", response_body AS "responseBody", created_at AS "createdAt"
                    FROM delivery_attempts WHERE delivery_id = d.id ORDER BY attempt DESC LIMIT ${sql.raw(String(ATTEMPTS_SHOWN))}) a
         ) AS "recentAttempts"
    FROM deliveries d JOIN events e ON e.id = d.event_id`;

/**
 * The claim's fairness keys, written once for every place the claim needs them (over a
 * delivery aliased `d`): its destination, its webhook (whose id is `webhookId`) or its
 * push notification config; its organization, its webhook's (`w`) or its push task's
 * (`t`) requester's; and the share its destination may hold (less while its webhook is
 * failing).
 */
const destinationOf = (webhookId: string, d: string): Sql =>
  sql.raw(`COALESCE(${webhookId}::text, ${d}.push_task_id::text || ' ' || ${d}.push_config_id)`);
const organizationOf = (w: string, t: string, d: string): Sql =>
  sql.raw(
    `COALESCE(${w}.organization_id::text, ${t}.requester_organization_id::text, 'task ' || ${d}.push_task_id::text)`,
  );
const shareOf = (w: string, claim: ClaimRequest): Sql =>
  sql`CASE WHEN ${sql.raw(w)}.failing_since IS NOT NULL THEN ${claim.failingShare}::int ELSE ${claim.organizationShare}::int END`;

const INSERT_ATTEMPT = sql`INSERT INTO delivery_attempts (delivery_id, attempt, succeeded, status_code, error, duration_ms, response_headers, response_body)`;
/** A late result replaces the `interrupted` entry a later claim wrote for the same attempt. */
const REPLACING_INTERRUPTED = sql`
  ON CONFLICT (delivery_id, attempt) DO UPDATE
     SET succeeded = EXCLUDED.succeeded, status_code = EXCLUDED.status_code, error = EXCLUDED.error,
         duration_ms = EXCLUDED.duration_ms, response_headers = EXCLUDED.response_headers,
         response_body = EXCLUDED.response_body, created_at = now()`;

/** A JSON parameter, or NULL. */
const jsonOrNull = (value: object | null | undefined): string | null =>
  value === undefined || value === null ? null : JSON.stringify(value);

const CLAIM_EXAMPLE: ClaimRequest = {
  limit: 10,
  leaseMs: 15_000,
  held: {
    heldByDestination: new Map([['d', 1]]),
    heldByOrganization: new Map([['o', 1]]),
    fullDestinations: [],
    fullOrganizations: [],
  },
  organizationShare: 5,
  failingShare: 1,
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
 * The deliveries and delivery_attempts tables: the dispatchers' queue (the claim is a
 * named read model, see its comment), each attempt's outcome, and the deliveries a
 * webhook's owner reads and redelivers.
 */
@Injectable()
export class DeliveriesRepository {
  constructor(private readonly db: Database) {}

  /**
   * Read model: claims due deliveries, fairly, with their targets. Each delivery has
   * a destination (its webhook, or its push notification config) and an organization
   * (the webhook's, or the task requester's: `tasks`, the ledger's). The claim picks,
   * oldest due first, only rows within the room each destination and organization
   * still has (fairPick, the forwarder's claim's too).
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
  async claimDeliveries(claim: ClaimRequest): Promise<ClaimedDeliveryRecord[]> {
    return this.db.rows<ClaimedDeliveryRecord>(sql`
      UPDATE deliveries d
         SET attempts = d.attempts + 1, in_flight = true, updated_at = now(),
             next_attempt_at = now() + ${claim.leaseMs} * interval '1 millisecond'
        FROM (
          ${fairPick(
            {
              from: sql`deliveries q LEFT JOIN webhooks cw ON cw.id = q.webhook_id LEFT JOIN tasks ct ON ct.id = q.push_task_id`,
              also: sql.empty,
              destination: destinationOf('q.webhook_id', 'q'),
              organization: organizationOf('cw', 'ct', 'q'),
              destinationShare: shareOf('cw', claim),
              organizationShare: sql`${claim.organizationShare}::int`,
            },
            claim.held,
            claim.limit,
          )}
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
                w.id AS "webhookId", w.url AS "webhookUrl", w.secret,
                CASE WHEN w.previous_secret_expires_at > now() THEN w.previous_secret END AS "previousSecret",
                e.id AS "eventId", e.type AS "eventType", e.organization_id AS "organizationId",
                e.created_at AS "eventCreatedAt", e.data,
                COALESCE(e.traceparent, d.traceparent) AS traceparent,
                d.push_task_id AS "pushTaskId", d.push_config_id AS "pushConfigId", d.push_seq AS "pushSeq",
                p.url AS "pushUrl", p.token, p.authentication, p.protocol_version AS "protocolVersion",
                (o.status = 'deleted') AS "ownerDeleted",
                ${destinationOf('w.id', 'd')} AS destination,
                ${organizationOf('w', 'pt', 'd')} AS "fairOrganization",
                ${shareOf('w', claim)} AS share`);
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
      ${INSERT_ATTEMPT} SELECT d.id, ${log.attempt}, ${log.succeeded}, ${log.statusCode}, ${log.error}, ${log.durationMs},
                               ${jsonOrNull(log.responseHeaders)}::jsonb, ${log.responseBody ?? null}
        FROM deliveries d WHERE d.id = ${log.deliveryId} ${replace ? REPLACING_INTERRUPTED : sql`ON CONFLICT DO NOTHING`}`,
      tx,
    );
  }

  /**
   * A success in one statement (the hot path): the delivery is finished while this
   * claim still holds it, the endpoint's failing run ends, and the attempt is logged.
   */
  @GenerateSql({
    params: [
      {
        id: DummyValue.UUID,
        attempt: 1,
        statusCode: 200,
        durationMs: 12,
        responseHeaders: { 'content-type': 'text/plain' },
        responseBody: 'ok',
      },
      DummyValue.UUID_2,
    ],
  })
  async recordSuccess(
    delivery: {
      id: string;
      attempt: number;
      statusCode: number | null;
      durationMs: number;
      responseHeaders?: Record<string, string> | null;
      responseBody?: string | null;
    },
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
      ${INSERT_ATTEMPT} SELECT d.id, ${delivery.attempt}, true, ${delivery.statusCode}, NULL, ${delivery.durationMs},
                               ${jsonOrNull(delivery.responseHeaders)}::jsonb, ${delivery.responseBody ?? null}
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
  async delivery(id: string): Promise<DeliveryRecord | null> {
    return this.db.one<DeliveryRecord>(sql`${SELECT_DELIVERY} WHERE d.id = ${id}`);
  }

  /** The delivery of an event to a webhook (a ping's). */
  @GenerateSql({ params: [DummyValue.UUID, 'evt_example'] })
  async deliveryOfEvent(webhookId: string, eventId: string): Promise<DeliveryRecord | null> {
    return this.db.one<DeliveryRecord>(
      sql`${SELECT_DELIVERY} WHERE d.webhook_id = ${webhookId} AND d.event_id = ${eventId}`,
    );
  }

  /** A page of a webhook's deliveries, newest first. */
  @GenerateSql({ params: [DummyValue.UUID, 'failed', { limit: 50 }] })
  async listDeliveries(
    webhookId: string,
    status: DeliveryStatus | undefined,
    query: PageQuery,
  ): Promise<{ items: DeliveryRecord[]; nextCursor: string | null }> {
    const page = keyset('d', query);
    const rows = await this.db.rows<DeliveryRecord>(sql`
      ${SELECT_DELIVERY} ${sql.where([sql`d.webhook_id = ${webhookId}`, status ? sql`d.status = ${status}` : sql.empty, page.after])} ${page.tail}`);
    return page.cut(rows, recordCreationPosition);
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
