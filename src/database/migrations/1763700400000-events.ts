import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Events (docs/api.md §8): the outbox, webhook subscriptions, deliveries and their
 * attempt log.
 *
 * - `events` is the outbox. A module that changes something inserts its event with the
 *   same transaction, and the fan-out to `deliveries` happens in that same statement,
 *   so a rollback leaves neither and a commit leaves both. One event concerns one
 *   organization (its envelope names it); `identity_ids` are that organization's
 *   identities the event is about, which identity-scoped subscriptions match. `data`
 *   is `json`, not `jsonb`: it is only ever sent, never queried, and keeps the key
 *   order of the REST views it copies.
 * - `deliveries` is the work queue: one row per (subscription, event), or per (A2A
 *   push notification config, numbered task event) — push notifications ride on the
 *   same engine. A pending row is due at `next_attempt_at`; a dispatcher claims due
 *   rows with `FOR UPDATE SKIP LOCKED`, sets `in_flight` and moves `next_attempt_at` to
 *   the end of its lease, so a crashed dispatcher's claims fall due again by themselves.
 *   `attempts` counts claims: each attempt number is sent by one dispatcher only, and
 *   the unique (delivery, attempt) of the log makes that an invariant.
 * - `webhooks.secret` is stored as issued (whsec_…): it must be readable to sign, and
 *   it is never returned after creation or rotation (see docs/architecture.md).
 * Plain SQL that also runs on the embedded PGlite (no extensions).
 */
export class Events1763700400000 implements MigrationInterface {
  name = 'Events1763700400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE events (
        id               varchar(32) PRIMARY KEY,
        type             varchar(32) NOT NULL,
        organization_id  uuid NOT NULL CONSTRAINT fk_events_organization REFERENCES organizations(id),
        identity_ids     uuid[] NOT NULL DEFAULT '{}',
        data             json NOT NULL,
        created_at       timestamptz(3) NOT NULL DEFAULT now(),
        CONSTRAINT ck_events_id CHECK (id ~ '^evt_[0-9A-Z]{26}$'),
        CONSTRAINT ck_events_type CHECK (type IN (
          'task.created', 'task.message', 'task.status', 'task.artifact', 'api_key.created', 'api_key.revoked',
          'identity.claimed', 'identity.updated', 'contact_rule.created', 'contact_rule.updated', 'contact_rule.deleted',
          'ping'))
      );
      CREATE INDEX ix_events_organization ON events (organization_id, created_at DESC, id DESC);

      CREATE TABLE webhooks (
        id                          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id             uuid NOT NULL CONSTRAINT fk_webhooks_organization REFERENCES organizations(id),
        identity_id                 uuid CONSTRAINT fk_webhooks_identity REFERENCES identities(id),
        url                         varchar(2048) NOT NULL,
        events                      text[] NOT NULL,
        description                 varchar(500) NOT NULL DEFAULT '',
        secret                      varchar(100) NOT NULL,
        previous_secret             varchar(100),
        previous_secret_expires_at  timestamptz(3),
        status                      varchar(16) NOT NULL DEFAULT 'active',
        failing_since               timestamptz(3),
        created_at                  timestamptz(3) NOT NULL DEFAULT now(),
        updated_at                  timestamptz(3) NOT NULL DEFAULT now(),
        CONSTRAINT ck_webhooks_status CHECK (status IN ('active', 'disabled')),
        CONSTRAINT ck_webhooks_events CHECK (cardinality(events) BETWEEN 1 AND 20),
        CONSTRAINT ck_webhooks_secret CHECK (left(secret, 6) = 'whsec_'),
        CONSTRAINT ck_webhooks_previous_secret CHECK ((previous_secret IS NULL) = (previous_secret_expires_at IS NULL))
      );
      -- Keyset pages per organization and per identity; the fan-out reads an
      -- organization's active subscriptions (at most 50) on every event.
      CREATE INDEX ix_webhooks_organization ON webhooks (organization_id, created_at DESC, id DESC);
      CREATE INDEX ix_webhooks_identity ON webhooks (identity_id, created_at DESC, id DESC) WHERE identity_id IS NOT NULL;
      CREATE INDEX ix_webhooks_fan_out ON webhooks (organization_id) WHERE status = 'active';

      -- One row per (target, event): a webhook subscription and an outbox event, or an
      -- A2A push notification config and the numbered task event it reports.
      CREATE TABLE deliveries (
        id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        webhook_id        uuid CONSTRAINT fk_deliveries_webhook REFERENCES webhooks(id) ON DELETE CASCADE,
        event_id          varchar(32) CONSTRAINT fk_deliveries_event REFERENCES events(id),
        push_task_id      uuid,
        push_config_id    varchar(200),
        push_seq          integer,
        status            varchar(16) NOT NULL DEFAULT 'pending',
        attempts          integer NOT NULL DEFAULT 0,
        in_flight         boolean NOT NULL DEFAULT false,
        next_attempt_at   timestamptz(3) DEFAULT now(),
        last_attempt_at   timestamptz(3),
        last_status_code  smallint,
        last_error        varchar(500),
        last_duration_ms  integer,
        created_at        timestamptz(3) NOT NULL DEFAULT now(),
        updated_at        timestamptz(3) NOT NULL DEFAULT now(),
        CONSTRAINT fk_deliveries_push_config FOREIGN KEY (push_task_id, push_config_id)
          REFERENCES push_notification_configs (task_id, config_id) ON DELETE CASCADE,
        CONSTRAINT ck_deliveries_target CHECK (
          (webhook_id IS NOT NULL AND event_id IS NOT NULL AND push_task_id IS NULL AND push_config_id IS NULL AND push_seq IS NULL) OR
          (webhook_id IS NULL AND event_id IS NULL AND push_task_id IS NOT NULL AND push_config_id IS NOT NULL AND push_seq IS NOT NULL)),
        CONSTRAINT ck_deliveries_status CHECK (status IN ('pending', 'succeeded', 'failed')),
        CONSTRAINT ck_deliveries_attempts CHECK (attempts >= 0),
        -- Only pending deliveries are scheduled, and only they can be in flight.
        CONSTRAINT ck_deliveries_schedule CHECK ((status = 'pending') = (next_attempt_at IS NOT NULL)),
        CONSTRAINT ck_deliveries_in_flight CHECK (NOT in_flight OR status = 'pending')
      );
      CREATE UNIQUE INDEX uq_deliveries_webhook_event ON deliveries (webhook_id, event_id) WHERE webhook_id IS NOT NULL;
      CREATE UNIQUE INDEX uq_deliveries_push ON deliveries (push_task_id, push_config_id, push_seq) WHERE push_task_id IS NOT NULL;
      -- The dispatchers' queue: due rows first; finished rows leave the index.
      CREATE INDEX ix_deliveries_due ON deliveries (next_attempt_at) WHERE status = 'pending';
      CREATE INDEX ix_deliveries_webhook ON deliveries (webhook_id, created_at DESC, id DESC) WHERE webhook_id IS NOT NULL;
      CREATE INDEX ix_deliveries_event ON deliveries (event_id) WHERE event_id IS NOT NULL;

      CREATE TABLE delivery_attempts (
        id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        delivery_id  uuid NOT NULL CONSTRAINT fk_delivery_attempts_delivery REFERENCES deliveries(id) ON DELETE CASCADE,
        attempt      integer NOT NULL,
        succeeded    boolean NOT NULL,
        status_code  smallint,
        error        varchar(500),
        duration_ms  integer NOT NULL,
        created_at   timestamptz(3) NOT NULL DEFAULT now(),
        CONSTRAINT ck_delivery_attempts_attempt CHECK (attempt >= 1),
        -- One log entry per attempt: no two dispatchers ever send the same attempt.
        CONSTRAINT uq_delivery_attempts_attempt UNIQUE (delivery_id, attempt)
      );
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TABLE delivery_attempts;
      DROP TABLE deliveries;
      DROP TABLE webhooks;
      DROP TABLE events;
    `);
  }
}
