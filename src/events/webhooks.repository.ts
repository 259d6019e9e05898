import { Injectable } from '@nestjs/common';
import { keyset, recordCreationPosition, type PageQuery } from '../common/pagination';
import { isUuid } from '../common/parse-id.pipe';
import { Database, type Tx } from '../database/database';
import { DummyValue, GenerateSql } from '../database/generate-sql';
import type { RowOf } from '../database/row';
import { sql } from '../database/sql';
import { hourOf } from '../database/hour-bucket';
import type { Webhook, WebhookStatus } from './webhook.entity';
import type { WebhookRecord } from './webhook-records';

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

/** One hour of an organization's webhook deliveries (docs/api.md §13, "The overview"). */
export interface DeliveryHour {
  hour: number;
  succeeded: number;
  failed: number;
  retrying: number;
}

/** A webhook failing since `failingSince` (the overview's attention list). */
export type FailingWebhook = Pick<Webhook, 'id' | 'url' | 'status'> & { failingSince: Date };

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

/**
 * Read model: a webhook with the handle of the identity it is scoped to
 * (`identities` belongs to the identities module). Kept as one statement so that a
 * list filters by handle and pages in one round trip; the events module sits below
 * identities in the module graph (identities emit events). Never the secret. Named as
 * WebhookRecord's properties, so rows arrive as records.
 */
const SELECT_WEBHOOK = sql`
  SELECT w.id, w.organization_id AS "organizationId", w.identity_id AS "identityId", i.agent_handle AS "identityHandle",
         w.url, w.events, w.description, w.status, w.failing_since AS "failingSince",
         w.previous_secret_expires_at AS "previousSecretExpiresAt", w.created_at AS "createdAt", w.updated_at AS "updatedAt"
    FROM webhooks w LEFT JOIN identities i ON i.id = w.identity_id`;

/** The webhooks table: subscriptions, their secrets and their failing state. */
@Injectable()
export class WebhooksRepository {
  constructor(private readonly db: Database) {}

  /** The webhook with its identity's handle (whose it is, requireAccess decides); locked for the transaction with `lock`. */
  @GenerateSql({ name: 'read', params: [DummyValue.UUID, false] }, { name: 'locked', params: [DummyValue.UUID, true] })
  async findWebhook(id: string, lock: boolean, tx?: Tx): Promise<WebhookRecord | null> {
    return this.db.one<WebhookRecord>(
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
  ): Promise<{ items: WebhookRecord[]; nextCursor: string | null }> {
    const page = keyset('w', query);
    const identity =
      filter.identity === undefined
        ? sql.empty
        : isUuid(filter.identity)
          ? sql`w.identity_id = ${filter.identity}::uuid`
          : sql`i.agent_handle = ${filter.identity}`;
    const rows = await this.db.rows<WebhookRecord>(sql`
      ${SELECT_WEBHOOK} ${sql.where([
        sql`w.organization_id = ${scope.organizationId}`,
        scope.identityId ? sql`w.identity_id = ${scope.identityId}` : sql.empty,
        filter.status ? sql`w.status = ${filter.status}` : sql.empty,
        identity,
        page.after,
      ])} ${page.tail}`);
    return page.cut(rows, recordCreationPosition);
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
    if (set.isEmpty) {
      return;
    }
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
   * The organization's webhook deliveries created since `since`, per hour (hours since
   * the Unix epoch, UTC) and outcome: succeeded, failed for good, or retrying (pending
   * after a failed attempt). Its webhooks (at most 50) by `ix_webhooks_organization`,
   * each one's deliveries by a range of `ix_deliveries_webhook`.
   */
  @GenerateSql({ params: [DummyValue.UUID, DummyValue.DATE] })
  async deliveriesPerHour(organizationId: string, since: Date): Promise<DeliveryHour[]> {
    return this.db.rows<DeliveryHour>(sql`
      SELECT ${hourOf('d.created_at')} AS hour,
             count(*) FILTER (WHERE d.status = 'succeeded')::int AS succeeded,
             count(*) FILTER (WHERE d.status = 'failed')::int AS failed,
             count(*) FILTER (WHERE d.status = 'pending' AND d.attempts > 0)::int AS retrying
        FROM webhooks w JOIN deliveries d ON d.webhook_id = w.id
       WHERE w.organization_id = ${organizationId} AND d.webhook_id IS NOT NULL AND d.created_at >= ${since}
       GROUP BY 1`);
  }

  /** The organization's webhooks in a failing run (or disabled after one), longest failing first. */
  @GenerateSql({ params: [DummyValue.UUID, 20] })
  async failingWebhooks(organizationId: string, limit: number): Promise<FailingWebhook[]> {
    return this.db.rows<FailingWebhook>(sql`
      SELECT w.id, w.url, w.status, w.failing_since AS "failingSince"
        FROM webhooks w
       WHERE w.organization_id = ${organizationId} AND w.failing_since IS NOT NULL
       ORDER BY w.failing_since, w.id LIMIT ${limit}`);
  }
}
