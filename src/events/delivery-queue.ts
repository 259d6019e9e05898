import { Inject, Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { Logger } from 'pino';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { LOGGER } from '../common/tokens';
import type { SendOutcome } from './delivery-sender';
import type { EventType } from './event-types';
import type { PushVersion } from './push-notifications';
import { DISABLE_AFTER_MS, retryDelay } from './retry-schedule';

/** The envelope of CONTRACT §8, in its order. */
export interface Envelope {
  id: string;
  type: EventType;
  created_at: string;
  organization_id: string;
  data: Record<string, unknown>;
}

export interface WebhookTarget {
  kind: 'webhook';
  webhookId: string;
  url: string;
  /** Every secret valid now, newest first. */
  secrets: string[];
  event: Envelope;
}

/** An A2A push notification config and the task event to report to it. */
export interface PushTarget {
  kind: 'push';
  taskId: string;
  configId: string;
  seq: number;
  url: string;
  token: string | null;
  authentication: { scheme: string; credentials: string } | null;
  version: PushVersion;
  /** The requester who set the config has been deleted: nothing more is sent to it. */
  ownerDeleted: boolean;
}

/** A delivery a dispatcher has claimed: what to send, and where. */
export interface ClaimedDelivery {
  id: string;
  /** This attempt's number; only the dispatcher that claimed it sends it. */
  attempt: number;
  target: WebhookTarget | PushTarget;
  /** The keys of its fair share: its destination (webhook or push config) and organization. */
  destination: string;
  organization: string;
  /** How many slots its destination may hold (less while a webhook is failing). */
  destinationShare: number;
}

/**
 * What a dispatcher holds in flight, and the shares: at most `organizationShare`
 * slots per organization and per destination, `failingShare` per failing webhook.
 */
export interface FairShares {
  heldByDestination: ReadonlyMap<string, number>;
  /** The share each destination in flight was claimed with (a failing webhook's is smaller). */
  shareOfDestination: ReadonlyMap<string, number>;
  heldByOrganization: ReadonlyMap<string, number>;
  organizationShare: number;
  failingShare: number;
}

interface ClaimedRow {
  id: string;
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
  push_task_id: string | null;
  push_config_id: string | null;
  push_seq: number | null;
  push_url: string | null;
  token: string | null;
  authentication: { scheme: string; credentials: string } | null;
  protocol_version: PushVersion | null;
  owner_deleted: boolean | null;
  destination: string;
  fair_organization: string;
  share: number;
}

/**
 * Claims due deliveries, fairly. Each delivery has a destination (its webhook, or
 * its push notification config) and an organization (the webhook's, or the task
 * requester's). The dispatcher passes what it already has in flight per
 * destination and per organization, and the room each may still take; the claim
 * picks, oldest due first, only rows within that room, so a slow or failing
 * endpoint — or one organization — never holds more than its share of the slots.
 * Destinations and organizations already at their share are skipped by the scan
 * itself ($10, $11), so a backlog of theirs cannot hide other work behind it; the
 * scan reads at most $9 due rows beyond them.
 *
 * The rows picked are then locked, skipping rows another dispatcher holds (and,
 * re-checked under the lock, rows it has just claimed), so concurrent claims never
 * overlap; the UPDATE counts the attempt and leases the row (next_attempt_at moves
 * to the end of the lease). A row still `in_flight` when it falls due again was
 * claimed by a dispatcher that stopped before recording a result: its lease has run
 * out. The target comes with it: the webhook and the event, or the push
 * notification config (the ledger's table: push notifications ride on this engine;
 * the foreign key deletes their deliveries with the config).
 */
const CLAIM = `
  UPDATE deliveries d
     SET attempts = d.attempts + 1, in_flight = true, updated_at = now(),
         next_attempt_at = now() + $2 * interval '1 millisecond'
    FROM (
      WITH held_destination AS (SELECT * FROM unnest($3::text[], $4::int[]) AS h(destination, n)),
           held_organization AS (SELECT * FROM unnest($5::text[], $6::int[]) AS h(organization, n)),
      candidates AS (
        SELECT c.id, c.next_attempt_at, c.destination, c.organization,
               c.share - COALESCE(hd.n, 0) AS destination_room, $7::int - COALESCE(ho.n, 0) AS organization_room
          FROM (SELECT q.id, q.next_attempt_at,
                       COALESCE(q.webhook_id::text, q.push_task_id::text || ' ' || q.push_config_id) AS destination,
                       COALESCE(cw.organization_id::text, ct.requester_organization_id::text, 'task ' || q.push_task_id::text) AS organization,
                       CASE WHEN cw.failing_since IS NOT NULL THEN $8::int ELSE $7::int END AS share
                  FROM deliveries q
                  LEFT JOIN webhooks cw ON cw.id = q.webhook_id
                  LEFT JOIN tasks ct ON ct.id = q.push_task_id
                 WHERE q.status = 'pending' AND q.next_attempt_at <= now()
                   AND NOT (COALESCE(q.webhook_id::text, q.push_task_id::text || ' ' || q.push_config_id) = ANY($10::text[]))
                   AND NOT (COALESCE(cw.organization_id::text, ct.requester_organization_id::text, 'task ' || q.push_task_id::text) = ANY($11::text[]))
                 ORDER BY q.next_attempt_at
                 LIMIT $9) c
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
         LIMIT $1
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
            d.push_task_id, d.push_config_id, d.push_seq, p.url AS push_url, p.token, p.authentication, p.protocol_version,
            (o.status = 'deleted') AS owner_deleted,
            COALESCE(w.id::text, d.push_task_id::text || ' ' || d.push_config_id) AS destination,
            COALESCE(w.organization_id::text, pt.requester_organization_id::text, 'task ' || d.push_task_id::text) AS fair_organization,
            CASE WHEN w.failing_since IS NOT NULL THEN $8::int ELSE $7::int END AS share`;

/** How many due rows one claim reads beyond the destinations and organizations at their share, per slot asked for. */
const SCAN_PER_SLOT = 4;

const INSERT_ATTEMPT = 'INSERT INTO delivery_attempts (delivery_id, attempt, succeeded, status_code, error, duration_ms)';
/** A late result replaces the `interrupted` entry a later claim wrote for the same attempt. */
const REPLACING_INTERRUPTED = `
  ON CONFLICT (delivery_id, attempt) DO UPDATE
     SET succeeded = EXCLUDED.succeeded, status_code = EXCLUDED.status_code, error = EXCLUDED.error,
         duration_ms = EXCLUDED.duration_ms, created_at = now()`;
/** Logs an attempt of a delivery that still exists (its webhook may have been deleted meanwhile). */
const LOG_ATTEMPT = `${INSERT_ATTEMPT} SELECT d.id, $2, $3, $4, $5, $6 FROM deliveries d WHERE d.id = $1 ${REPLACING_INTERRUPTED}`;
const LOG_INTERRUPTED = `${INSERT_ATTEMPT} SELECT d.id, $2, $3, $4, $5, $6 FROM deliveries d WHERE d.id = $1 ON CONFLICT DO NOTHING`;

/**
 * A success in one statement (the hot path): the delivery is finished while this
 * claim still holds it, the endpoint's failing run ends, and the attempt is logged.
 */
const SUCCEEDED = `
  WITH finished AS (
    UPDATE deliveries
       SET status = 'succeeded', in_flight = false, next_attempt_at = NULL, updated_at = now(),
           last_attempt_at = now(), last_status_code = $3, last_error = NULL, last_duration_ms = $4
     WHERE id = $1 AND attempts = $2 AND in_flight
  ), recovered AS (
    UPDATE webhooks SET failing_since = NULL WHERE id = $5 AND failing_since IS NOT NULL
  )
  ${INSERT_ATTEMPT} SELECT d.id, $2, true, $3, NULL, $4 FROM deliveries d WHERE d.id = $1 ${REPLACING_INTERRUPTED}`;

const INTERRUPTED = 'interrupted: the dispatcher stopped before the result was recorded';

@Injectable()
export class DeliveryQueue {
  constructor(
    private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** A lease outlives any send (bounded by the timeout), so only a stopped dispatcher's claims expire. */
  private get leaseMs(): number {
    return 2 * this.config.events.timeoutMs + 5_000;
  }

  async claim(limit: number, shares: FairShares): Promise<ClaimedDelivery[]> {
    const destinations = [...shares.heldByDestination];
    const organizations = [...shares.heldByOrganization];
    // At their share already: skipped by the scan.
    const fullDestinations = destinations
      .filter(([key, n]) => n >= (shares.shareOfDestination.get(key) ?? shares.organizationShare)).map(([key]) => key);
    const fullOrganizations = organizations.filter(([, n]) => n >= shares.organizationShare).map(([key]) => key);
    // One statement, its own transaction. The log of an interrupted attempt follows it;
    // should this process stop in between, only that log line is missing.
    const [rows] = (await this.dataSource.query(CLAIM, [
      limit, this.leaseMs,
      destinations.map(([key]) => key), destinations.map(([, n]) => n),
      organizations.map(([key]) => key), organizations.map(([, n]) => n),
      shares.organizationShare, shares.failingShare, limit * SCAN_PER_SLOT,
      fullDestinations, fullOrganizations,
    ])) as [ClaimedRow[], number];
    for (const row of rows.filter((r) => r.interrupted)) {
      await this.dataSource.query(LOG_INTERRUPTED, [row.id, row.attempt - 1, false, null, INTERRUPTED, 0]);
    }
    return rows.map((row) => ({
      id: row.id, attempt: row.attempt, target: targetOf(row),
      destination: row.destination, organization: row.fair_organization, destinationShare: row.share,
    }));
  }

  /**
   * Records an attempt's outcome. Success finishes the delivery and ends the
   * endpoint's failing run. Failure schedules the next attempt (or fails the
   * delivery when the schedule is spent), starts or extends the failing run, and
   * disables the webhook once that run has lasted DISABLE_AFTER_MS. The delivery
   * is only updated while this claim still holds it.
   */
  async complete(delivery: ClaimedDelivery, outcome: SendOutcome): Promise<void> {
    const webhookId = delivery.target.kind === 'webhook' ? delivery.target.webhookId : null;
    if (outcome.ok) {
      await this.dataSource.query(SUCCEEDED, [delivery.id, delivery.attempt, outcome.statusCode, outcome.durationMs, webhookId]);
      return;
    }
    await this.dataSource.transaction(async (em) => {
      await em.query(LOG_ATTEMPT, [delivery.id, delivery.attempt, false, outcome.statusCode, outcome.error, outcome.durationMs]);
      // A policy refusal is final: the same destination would be refused at every retry.
      const delay = outcome.final ? null : retryDelay(this.config.events.retryScheduleMs, delivery.attempt);
      if (webhookId === null) {
        // A push notification config has no failing run: it lives as long as its task.
        await this.finish(em, delivery, outcome, delay !== null ? 'pending' : 'failed', delay);
        return;
      }
      const [webhook] = (await em.query(
        `SELECT status, (failing_since <= now() - $2 * interval '1 millisecond') AS expired FROM webhooks WHERE id = $1 FOR UPDATE`,
        [webhookId, DISABLE_AFTER_MS],
      )) as Array<{ status: string; expired: boolean | null }>;
      const disable = webhook?.status === 'active' && webhook.expired === true;
      await em.query(`UPDATE webhooks SET failing_since = COALESCE(failing_since, now()) WHERE id = $1`, [webhookId]);
      const retry = webhook?.status === 'active' && !disable && delay !== null;
      await this.finish(em, delivery, outcome, retry ? 'pending' : 'failed', retry ? delay : null);
      if (disable) {
        await em.query(`UPDATE webhooks SET status = 'disabled', updated_at = now() WHERE id = $1`, [webhookId]);
        const failed = await this.failPending(em, webhookId);
        this.logger.warn({ webhook_id: webhookId, failed_deliveries: failed }, 'webhook disabled: its endpoint has been failing for 5 days');
      }
    });
  }

  /**
   * A disabled webhook sends nothing more: its waiting deliveries fail (each can be
   * retried once the webhook is enabled again). Returns how many.
   */
  async failPending(em: EntityManager, webhookId: string): Promise<number> {
    const [, count] = (await em.query(
      `UPDATE deliveries
          SET status = 'failed', next_attempt_at = NULL, updated_at = now(),
              last_error = COALESCE(last_error, 'the webhook was disabled')
        WHERE webhook_id = $1 AND status = 'pending' AND NOT in_flight`,
      [webhookId],
    )) as [unknown, number];
    return count;
  }

  /** `delayMs` is the wait before the next attempt of a pending delivery, null for a finished one. */
  private async finish(em: EntityManager, delivery: ClaimedDelivery, outcome: SendOutcome, status: 'pending' | 'succeeded' | 'failed', delayMs: number | null): Promise<void> {
    await em.query(
      `UPDATE deliveries
          SET status = $3, in_flight = false, updated_at = now(),
              next_attempt_at = now() + $4 * interval '1 millisecond',
              last_attempt_at = now(), last_status_code = $5, last_error = $6, last_duration_ms = $7
        WHERE id = $1 AND attempts = $2 AND in_flight`,
      [delivery.id, delivery.attempt, status, delayMs, outcome.statusCode, outcome.error, outcome.durationMs],
    );
  }
}

function targetOf(row: ClaimedRow): WebhookTarget | PushTarget {
  if (row.webhook_id !== null) {
    return {
      kind: 'webhook',
      webhookId: row.webhook_id,
      url: row.webhook_url!,
      secrets: row.previous_secret ? [row.secret!, row.previous_secret] : [row.secret!],
      event: {
        id: row.event_id!,
        type: row.event_type!,
        created_at: row.event_created_at!.toISOString(),
        organization_id: row.organization_id!,
        data: row.data!,
      },
    };
  }
  return {
    kind: 'push',
    taskId: row.push_task_id!,
    configId: row.push_config_id!,
    seq: row.push_seq!,
    url: row.push_url!,
    token: row.token,
    authentication: row.authentication,
    version: row.protocol_version!,
    ownerDeleted: row.owner_deleted === true,
  };
}
