import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Tracing (docs/operations.md, "Tracing"): the trace a change was made in, kept with what it
 * leaves behind. `task_events.trace_id`: the W3C trace id (32 hex digits) of the
 * request that made the task event. `events.traceparent` and, for A2A push
 * notifications (whose deliveries name no outbox row), `deliveries.traceparent`: the
 * `traceparent` of the change, which the dispatcher — in the server or a worker —
 * sends on the webhook or push request; `upstream_forwards.traceparent`: the send's or
 * cancel's, which the forwarder continues in its call to the upstream agent. All nullable (null: tracing was off), added
 * without a default, so no existing row is rewritten.
 */
export class TaskEventTrace1795553876351 implements MigrationInterface {
  name = 'TaskEventTrace1795553876351';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE task_events ADD COLUMN trace_id varchar(32)
        CONSTRAINT ck_task_events_trace_id CHECK (trace_id ~ '^[0-9a-f]{32}$');
      ALTER TABLE events ADD COLUMN traceparent varchar(55)
        CONSTRAINT ck_events_traceparent CHECK (traceparent ~ '^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$');
      ALTER TABLE deliveries ADD COLUMN traceparent varchar(55)
        CONSTRAINT ck_deliveries_traceparent CHECK (traceparent ~ '^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$');
      ALTER TABLE upstream_forwards ADD COLUMN traceparent varchar(55)
        CONSTRAINT ck_upstream_forwards_traceparent CHECK (traceparent ~ '^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$');
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE upstream_forwards DROP COLUMN traceparent;
      ALTER TABLE deliveries DROP COLUMN traceparent;
      ALTER TABLE events DROP COLUMN traceparent;
      ALTER TABLE task_events DROP COLUMN trace_id;
    `);
  }
}
