import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Delegation trees, usage and budgets (docs/api.md §18).
 *
 * - A task records its parent (a task its requester works on, named in the message's
 *   `referenceTaskIds`), its tree's root and its depth, set by the statement that
 *   inserts it; `a2a_child_depth` refuses a child deeper than the limit with SQLSTATE
 *   `TDEEP` (a code of its own, as `TMOVE`). No foreign key: the parent is found by the
 *   same statement, and a row never points at one inserted after it, so a tree has no
 *   cycle. Children are listed through `ix_tasks_parent`, a tree's tasks through
 *   `ix_tasks_root` (partial: tasks without a parent enter neither).
 * - `task_usage`: a task's usage, one row per task — what its worker reported (added
 *   by each reply or upstream answer carrying it; a cost in a second currency raises
 *   SQLSTATE `UCURR` in `a2a_usage_currency`) and, once the task is terminal, what the
 *   service measured.
 * - `usage_hourly`: the rollups, per hour of the tasks' creation × requester × worker
 *   (both roles in one row) × cost currency, added to when a task ends, in its
 *   transaction.
 * - Budgets are identity settings (`daily_task_quota`, `monthly_cost_budget_*`);
 *   `usage_counters` counts a requester's sends per UTC day and reported cost per UTC
 *   month, each under a conditional upsert in the send's own statement:
 *   `a2a_quota_check` raises SQLSTATE `QUOTA` when a send would go past the quota or the
 *   month's cost has reached its budget. `notified` is the highest threshold (80, 100)
 *   announced for the period; `usage.threshold` joins the event types.
 */
export class DelegationUsageBudgets1796470000000 implements MigrationInterface {
  name = 'DelegationUsageBudgets1796470000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE tasks ADD COLUMN parent_task_id uuid, ADD COLUMN root_task_id uuid,
        ADD COLUMN depth smallint NOT NULL DEFAULT 0,
        ADD CONSTRAINT ck_tasks_tree CHECK ((parent_task_id IS NULL) = (root_task_id IS NULL) AND (parent_task_id IS NULL) = (depth = 0));
      CREATE INDEX ix_tasks_parent ON tasks (parent_task_id, id) WHERE parent_task_id IS NOT NULL;
      CREATE INDEX ix_tasks_root ON tasks (root_task_id) WHERE root_task_id IS NOT NULL;

      CREATE FUNCTION a2a_child_depth(p_depth integer, p_max integer) RETURNS smallint LANGUAGE plpgsql AS $$
      BEGIN
        IF p_depth > p_max THEN
          RAISE EXCEPTION 'the task would be at depth % of its delegation tree; at most % is allowed', p_depth, p_max
            USING ERRCODE = 'TDEEP';
        END IF;
        RETURN p_depth;
      END $$;

      CREATE TABLE task_usage (
        task_id uuid NOT NULL,
        input_tokens bigint NOT NULL DEFAULT 0,
        output_tokens bigint NOT NULL DEFAULT 0,
        cost_amount numeric(24, 9),
        cost_currency varchar(3),
        reports integer NOT NULL DEFAULT 0,
        messages integer,
        parts integer,
        artifact_bytes bigint,
        duration_ms bigint,
        state_ms jsonb,
        finished_at timestamptz(3),
        CONSTRAINT pk_task_usage PRIMARY KEY (task_id),
        CONSTRAINT fk_task_usage_task FOREIGN KEY (task_id) REFERENCES tasks (id),
        CONSTRAINT ck_task_usage_cost CHECK ((cost_amount IS NULL) = (cost_currency IS NULL))
      );

      CREATE FUNCTION a2a_usage_currency(p_held varchar, p_reported varchar) RETURNS varchar LANGUAGE plpgsql AS $$
      BEGIN
        IF p_held IS NOT NULL AND p_reported IS NOT NULL AND p_held <> p_reported THEN
          RAISE EXCEPTION 'the task''s reported costs are in %; a cost in % cannot be added to them', p_held, p_reported
            USING ERRCODE = 'UCURR';
        END IF;
        RETURN COALESCE(p_held, p_reported);
      END $$;

      CREATE TABLE usage_hourly (
        hour timestamptz(3) NOT NULL,
        requester_identity_id uuid NOT NULL,
        requester_organization_id uuid NOT NULL,
        worker_identity_id uuid NOT NULL,
        worker_organization_id uuid NOT NULL,
        currency varchar(3) NOT NULL DEFAULT '',
        tasks integer NOT NULL DEFAULT 0,
        completed integer NOT NULL DEFAULT 0,
        failed integer NOT NULL DEFAULT 0,
        canceled integer NOT NULL DEFAULT 0,
        rejected integer NOT NULL DEFAULT 0,
        messages bigint NOT NULL DEFAULT 0,
        parts bigint NOT NULL DEFAULT 0,
        artifact_bytes bigint NOT NULL DEFAULT 0,
        duration_ms bigint NOT NULL DEFAULT 0,
        input_tokens bigint NOT NULL DEFAULT 0,
        output_tokens bigint NOT NULL DEFAULT 0,
        cost numeric(24, 9) NOT NULL DEFAULT 0,
        CONSTRAINT pk_usage_hourly PRIMARY KEY (requester_identity_id, worker_identity_id, hour, currency)
      );
      CREATE INDEX ix_usage_hourly_worker ON usage_hourly (worker_identity_id, hour);
      CREATE INDEX ix_usage_hourly_requester_org ON usage_hourly (requester_organization_id, hour);
      CREATE INDEX ix_usage_hourly_worker_org ON usage_hourly (worker_organization_id, hour);

      ALTER TABLE identities ADD COLUMN daily_task_quota integer,
        ADD COLUMN monthly_cost_budget_amount numeric(24, 9), ADD COLUMN monthly_cost_budget_currency varchar(3),
        ADD CONSTRAINT ck_identities_daily_task_quota CHECK (daily_task_quota > 0),
        ADD CONSTRAINT ck_identities_monthly_cost_budget CHECK (
          (monthly_cost_budget_amount IS NULL) = (monthly_cost_budget_currency IS NULL) AND monthly_cost_budget_amount > 0);

      CREATE TABLE usage_counters (
        identity_id uuid NOT NULL,
        period varchar(5) NOT NULL,
        starts_at timestamptz(3) NOT NULL,
        tasks integer NOT NULL DEFAULT 0,
        task_quota integer,
        cost numeric(24, 9) NOT NULL DEFAULT 0,
        cost_budget numeric(24, 9),
        notified smallint NOT NULL DEFAULT 0,
        CONSTRAINT pk_usage_counters PRIMARY KEY (identity_id, period, starts_at),
        CONSTRAINT fk_usage_counters_identity FOREIGN KEY (identity_id) REFERENCES identities (id),
        CONSTRAINT ck_usage_counters_period CHECK (period IN ('day', 'month'))
      );

      CREATE FUNCTION a2a_quota_check(p_tasks integer, p_quota integer, p_cost numeric, p_budget numeric, p_day_ends timestamptz, p_month_ends timestamptz)
        RETURNS integer LANGUAGE plpgsql AS $$
      BEGIN
        IF p_tasks > p_quota THEN
          RAISE EXCEPTION 'daily task quota of % reached', p_quota USING ERRCODE = 'QUOTA',
            DETAIL = to_char(p_day_ends AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"');
        END IF;
        IF p_cost >= p_budget THEN
          RAISE EXCEPTION 'monthly cost budget of % reached', trim_scale(p_budget) USING ERRCODE = 'QUOTA',
            DETAIL = to_char(p_month_ends AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"');
        END IF;
        RETURN p_tasks;
      END $$;

      ALTER TABLE events DROP CONSTRAINT ck_events_type;
      ALTER TABLE events ADD CONSTRAINT ck_events_type CHECK (type IN (
        'task.created', 'task.message', 'task.status', 'task.artifact', 'api_key.created', 'api_key.revoked',
        'identity.claimed', 'identity.updated', 'contact_rule.created', 'contact_rule.updated', 'contact_rule.deleted',
        'console.member_added', 'console.member_removed', 'ping', 'api_key.expiring',
        'approval.requested', 'approval.decided', 'usage.threshold'));
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DELETE FROM events WHERE type = 'usage.threshold';
      ALTER TABLE events DROP CONSTRAINT ck_events_type;
      ALTER TABLE events ADD CONSTRAINT ck_events_type CHECK (type IN (
        'task.created', 'task.message', 'task.status', 'task.artifact', 'api_key.created', 'api_key.revoked',
        'identity.claimed', 'identity.updated', 'contact_rule.created', 'contact_rule.updated', 'contact_rule.deleted',
        'console.member_added', 'console.member_removed', 'ping', 'api_key.expiring',
        'approval.requested', 'approval.decided'));
      DROP FUNCTION a2a_quota_check(integer, integer, numeric, numeric, timestamptz, timestamptz);
      DROP TABLE usage_counters;
      ALTER TABLE identities DROP CONSTRAINT ck_identities_monthly_cost_budget, DROP CONSTRAINT ck_identities_daily_task_quota,
        DROP COLUMN monthly_cost_budget_currency, DROP COLUMN monthly_cost_budget_amount, DROP COLUMN daily_task_quota;
      DROP TABLE usage_hourly;
      DROP FUNCTION a2a_usage_currency(varchar, varchar);
      DROP TABLE task_usage;
      DROP FUNCTION a2a_child_depth(integer, integer);
      DROP INDEX ix_tasks_root;
      DROP INDEX ix_tasks_parent;
      ALTER TABLE tasks DROP CONSTRAINT ck_tasks_tree, DROP COLUMN depth, DROP COLUMN root_task_id, DROP COLUMN parent_task_id;
    `);
  }
}
