import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The audit log (docs/api.md §15): one row per change made by a principal, written in
 * the change's transaction. `actor_type` is `console_user`, `api_key` or `signup`;
 * `actor_id` the user's or key's id (null for signup) and `actor_label` the key's
 * label at the time. `changes` holds `{ field: { before, after } }` for an allow-list
 * of fields per target type — never a secret. No foreign keys: an entry outlives the
 * key, identity or user it names. Indexes serve the list filters (newest first per
 * organization, by actor, by target, by action) and retention (oldest first).
 */
export class AuditEvents1795553649366 implements MigrationInterface {
  name = 'AuditEvents1795553649366';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE audit_events (
        id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL,
        actor_type      varchar(16) NOT NULL,
        actor_id        uuid,
        actor_label     varchar(200),
        action          varchar(64) NOT NULL,
        target_type     varchar(32) NOT NULL,
        target_id       varchar(200),
        target_label    varchar(200),
        changes         jsonb NOT NULL DEFAULT '{}'::jsonb,
        request_id      varchar(128),
        client_address  varchar(64),
        created_at      timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT ck_audit_events_actor_type CHECK (actor_type IN ('console_user', 'api_key', 'signup'))
      );
      -- The list, newest first, per organization.
      CREATE INDEX ix_audit_events_org_created ON audit_events (organization_id, created_at DESC, id DESC);
      -- Filters: by actor, by target, by action.
      CREATE INDEX ix_audit_events_org_actor ON audit_events (organization_id, actor_id, created_at DESC);
      CREATE INDEX ix_audit_events_org_target ON audit_events (organization_id, target_id, created_at DESC);
      CREATE INDEX ix_audit_events_org_action ON audit_events (organization_id, action, created_at DESC);
      -- Retention: the oldest entries first.
      CREATE INDEX ix_audit_events_created ON audit_events (created_at);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE audit_events`);
  }
}
