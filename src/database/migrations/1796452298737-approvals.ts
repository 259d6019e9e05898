import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Approval requests (docs/api.md §16). A new task whose pair needs a side's approval
 * is recorded and held (`tasks.held`: never shown to the worker's side) until every
 * asking side's organization approves it; it waits on one pending request per pair
 * and side (`uq_approvals_pending`), which the tasks started meanwhile join
 * (`approval_tasks`: the tasks waiting on a request, removed as each stops waiting).
 * The participants are copied as tasks copy them (handles and organizations never
 * change once claimed), so lists need no join. `decided_by_label` keeps the person's
 * email or the key's label as they were when they decided. Two event types join the
 * outbox: `approval.requested`, `approval.decided`.
 */
export class Approvals1796452298737 implements MigrationInterface {
  name = 'Approvals1796452298737';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE tasks ADD COLUMN held boolean NOT NULL DEFAULT false;

      CREATE TABLE approvals (
        id                         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id            uuid NOT NULL CONSTRAINT fk_approvals_organization REFERENCES organizations(id),
        side                       varchar(16) NOT NULL,
        requester_identity_id      uuid NOT NULL CONSTRAINT fk_approvals_requester REFERENCES identities(id),
        requester_handle           varchar(63) NOT NULL,
        requester_organization_id  uuid NOT NULL,
        worker_identity_id         uuid NOT NULL CONSTRAINT fk_approvals_worker REFERENCES identities(id),
        worker_handle              varchar(63) NOT NULL,
        worker_organization_id     uuid NOT NULL,
        state                      varchar(16) NOT NULL DEFAULT 'pending',
        remember                   varchar(8),
        reason                     varchar(500),
        decided_by_type            varchar(8),
        decided_by_id              uuid,
        decided_by_label           varchar(320),
        first_task_id              uuid NOT NULL CONSTRAINT fk_approvals_first_task REFERENCES tasks(id),
        created_at                 timestamptz(3) NOT NULL DEFAULT now(),
        expires_at                 timestamptz(3) NOT NULL,
        decided_at                 timestamptz(3),
        CONSTRAINT ck_approvals_side CHECK (side IN ('requester', 'worker')),
        CONSTRAINT ck_approvals_state CHECK (state IN ('pending', 'approved', 'denied', 'expired')),
        CONSTRAINT ck_approvals_remember CHECK (remember IN ('once', 'always')),
        CONSTRAINT ck_approvals_decided_by_type CHECK (decided_by_type IN ('user', 'key')),
        CONSTRAINT ck_approvals_decided CHECK ((state = 'pending') = (decided_at IS NULL)),
        CONSTRAINT ck_approvals_decided_by CHECK ((state IN ('approved', 'denied')) = (decided_by_type IS NOT NULL))
      );
      -- One pending request per pair and side: the tasks of the pair started meanwhile join it.
      CREATE UNIQUE INDEX uq_approvals_pending
        ON approvals (requester_identity_id, worker_identity_id, side) WHERE state = 'pending';
      -- The organization's list (keyset pages), its pending count and the per-organization limit.
      CREATE INDEX ix_approvals_organization ON approvals (organization_id, created_at DESC, id DESC);
      CREATE INDEX ix_approvals_organization_pending ON approvals (organization_id) WHERE state = 'pending';
      -- The expiry pass.
      CREATE INDEX ix_approvals_expiry ON approvals (expires_at) WHERE state = 'pending';

      CREATE TABLE approval_tasks (
        approval_id  uuid NOT NULL CONSTRAINT fk_approval_tasks_approval REFERENCES approvals(id) ON DELETE CASCADE,
        task_id      uuid NOT NULL CONSTRAINT fk_approval_tasks_task REFERENCES tasks(id),
        CONSTRAINT pk_approval_tasks PRIMARY KEY (approval_id, task_id)
      );
      CREATE INDEX ix_approval_tasks_task ON approval_tasks (task_id);

      ALTER TABLE events DROP CONSTRAINT ck_events_type;
      ALTER TABLE events ADD CONSTRAINT ck_events_type CHECK (type IN (
        'task.created', 'task.message', 'task.status', 'task.artifact', 'api_key.created', 'api_key.revoked',
        'identity.claimed', 'identity.updated', 'contact_rule.created', 'contact_rule.updated', 'contact_rule.deleted',
        'console.member_added', 'console.member_removed', 'ping', 'api_key.expiring',
        'approval.requested', 'approval.decided'));
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DELETE FROM events WHERE type IN ('approval.requested', 'approval.decided');
      ALTER TABLE events DROP CONSTRAINT ck_events_type;
      ALTER TABLE events ADD CONSTRAINT ck_events_type CHECK (type IN (
        'task.created', 'task.message', 'task.status', 'task.artifact', 'api_key.created', 'api_key.revoked',
        'identity.claimed', 'identity.updated', 'contact_rule.created', 'contact_rule.updated', 'contact_rule.deleted',
        'console.member_added', 'console.member_removed', 'ping', 'api_key.expiring'));
      DROP TABLE approval_tasks;
      DROP TABLE approvals;
      ALTER TABLE tasks DROP COLUMN held;
    `);
  }
}
