import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The event stream (docs/api.md §14) reads the outbox in commit order.
 *
 * Event ids (`evt_` + ULID) are allocated when the event is written, not when its
 * transaction commits: an id allocated earlier may become visible later, so "the
 * events after X" cannot be ordered by id or by `created_at`. Each row therefore keeps
 * the id of the transaction that wrote it (`txid`, xid8) and a number in write order
 * (`seq`). The stream's order is (txid, seq), and a reader only returns rows whose
 * transaction id is below the visibility horizon — `pg_snapshot_xmin` of its own
 * snapshot, below which every transaction has finished. Anything that commits later
 * has a transaction id at or above that horizon, so it sorts after every row already
 * returned: resuming after a position never skips a late commit nor repeats a row.
 *
 * Upstream (bridged) identities, docs/api.md §14: `identity_upstreams` names the A2A agent
 * an identity forwards its work to (`auth_value` is the upstream's secret: readable,
 * since it must be sent, and never returned by any route); `tasks.upstream_task_id` and
 * `upstream_context_id` are the upstream's own ids for a forwarded task; and
 * `upstream_forwards` is the forwarder's queue, on the delivery engine's model — due
 * rows claimed with FOR UPDATE SKIP LOCKED, `attempts` counting claims, a lease in
 * `next_attempt_at` — one row per requester message (unique per task and message id)
 * or cancel. `accepted` is set once the upstream has answered a message's forward, so
 * that a retry follows the upstream task instead of sending the message again.
 * Plain SQL that also runs on the embedded PGlite.
 */
export class EventStream1763700900000 implements MigrationInterface {
  name = 'EventStream1763700900000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE events
        ADD COLUMN txid xid8 NOT NULL DEFAULT pg_current_xact_id(),
        ADD COLUMN seq  bigint GENERATED ALWAYS AS IDENTITY;
      -- An organization's events in stream order (lists, streams, resumption).
      CREATE INDEX ix_events_stream ON events (organization_id, txid, seq);
      -- Retention: the oldest events first.
      CREATE INDEX ix_events_created ON events (created_at);

      CREATE TABLE identity_upstreams (
        identity_id       uuid PRIMARY KEY CONSTRAINT fk_identity_upstreams_identity REFERENCES identities(id),
        url               varchar(2048) NOT NULL,
        card_url          varchar(2048),
        protocol_version  varchar(8) NOT NULL,
        binding           varchar(16) NOT NULL,
        streaming         boolean NOT NULL DEFAULT false,
        auth_type         varchar(16) NOT NULL DEFAULT 'none',
        auth_header       varchar(100),
        auth_value        varchar(4096),
        created_at        timestamptz(3) NOT NULL DEFAULT now(),
        updated_at        timestamptz(3) NOT NULL DEFAULT now(),
        CONSTRAINT ck_identity_upstreams_version CHECK (protocol_version IN ('1.0', '0.3')),
        CONSTRAINT ck_identity_upstreams_binding CHECK (binding IN ('JSONRPC', 'HTTP+JSON', 'GRPC')),
        CONSTRAINT ck_identity_upstreams_auth CHECK (
          (auth_type = 'none' AND auth_value IS NULL AND auth_header IS NULL) OR
          (auth_type = 'bearer' AND auth_value IS NOT NULL AND auth_header IS NULL) OR
          (auth_type = 'api_key' AND auth_value IS NOT NULL AND auth_header IS NOT NULL))
      );

      ALTER TABLE tasks ADD COLUMN upstream_task_id varchar(200), ADD COLUMN upstream_context_id varchar(200);

      CREATE TABLE upstream_forwards (
        id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        seq              bigint GENERATED ALWAYS AS IDENTITY,
        task_id          uuid NOT NULL CONSTRAINT fk_upstream_forwards_task REFERENCES tasks(id),
        kind             varchar(16) NOT NULL,
        message_id       varchar(200) NOT NULL,
        status           varchar(16) NOT NULL DEFAULT 'pending',
        accepted         boolean NOT NULL DEFAULT false,
        attempts         integer NOT NULL DEFAULT 0,
        in_flight        boolean NOT NULL DEFAULT false,
        next_attempt_at  timestamptz(3) DEFAULT now(),
        last_error       varchar(500),
        created_at       timestamptz(3) NOT NULL DEFAULT now(),
        updated_at       timestamptz(3) NOT NULL DEFAULT now(),
        CONSTRAINT ck_upstream_forwards_kind CHECK (kind IN ('message', 'cancel')),
        CONSTRAINT ck_upstream_forwards_status CHECK (status IN ('pending', 'succeeded', 'failed')),
        CONSTRAINT ck_upstream_forwards_schedule CHECK ((status = 'pending') = (next_attempt_at IS NOT NULL)),
        -- One forward per requester message (and one cancel) per task: a retried send never queues twice.
        CONSTRAINT uq_upstream_forwards_message UNIQUE (task_id, kind, message_id)
      );
      CREATE INDEX ix_upstream_forwards_due ON upstream_forwards (next_attempt_at) WHERE status = 'pending';
      CREATE INDEX ix_upstream_forwards_task ON upstream_forwards (task_id, seq) WHERE status = 'pending';
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TABLE upstream_forwards;
      ALTER TABLE tasks DROP COLUMN upstream_context_id, DROP COLUMN upstream_task_id;
      DROP TABLE identity_upstreams;
      DROP INDEX ix_events_created;
      DROP INDEX ix_events_stream;
      ALTER TABLE events DROP COLUMN seq, DROP COLUMN txid;
    `);
  }
}
