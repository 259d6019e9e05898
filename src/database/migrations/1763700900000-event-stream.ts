import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The event stream (CONTRACT §14) reads the outbox in commit order.
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
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP INDEX ix_events_created;
      DROP INDEX ix_events_stream;
      ALTER TABLE events DROP COLUMN seq, DROP COLUMN txid;
    `);
  }
}
