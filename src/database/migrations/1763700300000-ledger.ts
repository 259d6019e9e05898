import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The ledger: contexts, tasks, their messages, artifacts and ordered events, the
 * requester's push notification configs, and idempotency keys for replies.
 *
 * Invariants held by the schema rather than by code alone:
 * - a task's requester and worker are its context's (composite foreign key);
 * - a task's state is one of the eight A2A states;
 * - one message per (task, role, A2A messageId) — a repeated send is not stored twice;
 * - one task per (requester, worker, messageId of the message that created it) — a
 *   retried creating send returns the first task;
 * - task events are numbered 1, 2, 3… per task (primary key), the order streams replay.
 * Tasks and contexts record both participants' handle and organization as well as
 * their ids: both are fixed once an identity is claimed (and only claimed identities
 * take part), so ledger reads and visibility filters need no join.
 * Everything here is plain SQL that also runs on the embedded PGlite (no extensions).
 */
export class Ledger1763700300000 implements MigrationInterface {
  name = 'Ledger1763700300000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE contexts (
        id                         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        requester_identity_id      uuid NOT NULL REFERENCES identities(id),
        requester_handle           varchar(63) NOT NULL,
        requester_organization_id  uuid NOT NULL REFERENCES organizations(id),
        worker_identity_id         uuid NOT NULL REFERENCES identities(id),
        worker_handle              varchar(63) NOT NULL,
        worker_organization_id     uuid NOT NULL REFERENCES organizations(id),
        created_at                 timestamptz(3) NOT NULL DEFAULT now(),
        updated_at                 timestamptz(3) NOT NULL DEFAULT now(),
        CONSTRAINT uq_contexts_pair UNIQUE (id, requester_identity_id, worker_identity_id)
      );
      CREATE INDEX ix_contexts_requester ON contexts (requester_identity_id, created_at DESC, id DESC);
      CREATE INDEX ix_contexts_worker ON contexts (worker_identity_id, created_at DESC, id DESC);
      CREATE INDEX ix_contexts_requester_organization ON contexts (requester_organization_id, created_at DESC, id DESC);
      CREATE INDEX ix_contexts_worker_organization ON contexts (worker_organization_id, created_at DESC, id DESC);

      CREATE TABLE tasks (
        id                     uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        context_id                 uuid NOT NULL,
        requester_identity_id      uuid NOT NULL REFERENCES identities(id),
        requester_handle           varchar(63) NOT NULL,
        requester_organization_id  uuid NOT NULL REFERENCES organizations(id),
        worker_identity_id         uuid NOT NULL REFERENCES identities(id),
        worker_handle              varchar(63) NOT NULL,
        worker_organization_id     uuid NOT NULL REFERENCES organizations(id),
        origin_message_id          varchar(200) NOT NULL,
        state                      varchar(16) NOT NULL DEFAULT 'submitted',
        status_message_id          uuid,
        status_timestamp           timestamptz(3) NOT NULL DEFAULT now(),
        metadata                   jsonb,
        seq                        integer NOT NULL DEFAULT 0,
        created_at                 timestamptz(3) NOT NULL DEFAULT now(),
        updated_at                 timestamptz(3) NOT NULL DEFAULT now(),
        CONSTRAINT fk_tasks_context FOREIGN KEY (context_id, requester_identity_id, worker_identity_id)
          REFERENCES contexts (id, requester_identity_id, worker_identity_id),
        CONSTRAINT ck_tasks_state CHECK (state IN (
          'submitted', 'working', 'input-required', 'auth-required', 'completed', 'failed', 'canceled', 'rejected')),
        CONSTRAINT ck_tasks_seq CHECK (seq >= 0)
      );
      CREATE UNIQUE INDEX uq_tasks_origin ON tasks (requester_identity_id, worker_identity_id, origin_message_id);
      -- Keyset pages, newest first: by pair (the protocol's ListTasks), by requester, by
      -- worker (and state: a worker polling for new work), by context.
      CREATE INDEX ix_tasks_pair ON tasks (requester_identity_id, worker_identity_id, created_at DESC, id DESC);
      CREATE INDEX ix_tasks_requester ON tasks (requester_identity_id, created_at DESC, id DESC);
      CREATE INDEX ix_tasks_worker ON tasks (worker_identity_id, created_at DESC, id DESC);
      CREATE INDEX ix_tasks_worker_state ON tasks (worker_identity_id, state, created_at DESC, id DESC);
      CREATE INDEX ix_tasks_context ON tasks (context_id, created_at DESC, id DESC);
      CREATE INDEX ix_tasks_requester_organization ON tasks (requester_organization_id, created_at DESC, id DESC);
      CREATE INDEX ix_tasks_worker_organization ON tasks (worker_organization_id, created_at DESC, id DESC);

      CREATE TABLE messages (
        id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        task_id             uuid NOT NULL REFERENCES tasks(id),
        message_id          varchar(200) NOT NULL,
        role                varchar(8) NOT NULL,
        parts               jsonb NOT NULL,
        metadata            jsonb,
        extensions          jsonb NOT NULL DEFAULT '[]'::jsonb,
        reference_task_ids  jsonb NOT NULL DEFAULT '[]'::jsonb,
        seq                 integer NOT NULL,
        created_at          timestamptz(3) NOT NULL DEFAULT now(),
        CONSTRAINT ck_messages_role CHECK (role IN ('user', 'agent')),
        CONSTRAINT ck_messages_parts CHECK (jsonb_typeof(parts) = 'array' AND jsonb_array_length(parts) BETWEEN 1 AND 100)
      );
      CREATE UNIQUE INDEX uq_messages_message_id ON messages (task_id, role, message_id);
      CREATE UNIQUE INDEX uq_messages_seq ON messages (task_id, seq);
      ALTER TABLE tasks ADD CONSTRAINT fk_tasks_status_message FOREIGN KEY (status_message_id) REFERENCES messages(id);

      CREATE TABLE artifacts (
        id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        task_id      uuid NOT NULL REFERENCES tasks(id),
        artifact_id  varchar(200) NOT NULL,
        name         varchar(200) NOT NULL DEFAULT '',
        description  varchar(2000) NOT NULL DEFAULT '',
        parts        jsonb NOT NULL,
        metadata     jsonb,
        last_chunk   boolean NOT NULL DEFAULT false,
        seq          integer NOT NULL,
        created_at   timestamptz(3) NOT NULL DEFAULT now(),
        updated_at   timestamptz(3) NOT NULL DEFAULT now(),
        CONSTRAINT ck_artifacts_parts CHECK (jsonb_typeof(parts) = 'array' AND jsonb_array_length(parts) >= 1)
      );
      CREATE UNIQUE INDEX uq_artifacts_artifact_id ON artifacts (task_id, artifact_id);

      -- Every change to a task, numbered per task; streams replay them in order.
      CREATE TABLE task_events (
        task_id     uuid NOT NULL REFERENCES tasks(id),
        seq         integer NOT NULL,
        kind        varchar(16) NOT NULL,
        state       varchar(16) NOT NULL,
        message_id  uuid REFERENCES messages(id),
        artifact    jsonb,
        created_at  timestamptz(3) NOT NULL DEFAULT now(),
        CONSTRAINT pk_task_events PRIMARY KEY (task_id, seq),
        CONSTRAINT ck_task_events_kind CHECK (kind IN ('status', 'message', 'artifact')),
        CONSTRAINT ck_task_events_artifact CHECK ((kind = 'artifact') = (artifact IS NOT NULL)),
        CONSTRAINT ck_task_events_message CHECK (kind <> 'message' OR message_id IS NOT NULL),
        CONSTRAINT ck_task_events_state CHECK (state IN (
          'submitted', 'working', 'input-required', 'auth-required', 'completed', 'failed', 'canceled', 'rejected'))
      );

      -- A2A push notification configs, owned by the task's requester (at most 10 per
      -- task, enforced under the task's row lock). Delivery comes with the events module.
      CREATE TABLE push_notification_configs (
        task_id            uuid NOT NULL REFERENCES tasks(id),
        config_id          varchar(200) NOT NULL,
        owner_identity_id  uuid NOT NULL REFERENCES identities(id),
        url                varchar(2048) NOT NULL,
        token              varchar(1000),
        authentication     jsonb,
        protocol_version   varchar(8) NOT NULL,
        created_at         timestamptz(3) NOT NULL DEFAULT now(),
        updated_at         timestamptz(3) NOT NULL DEFAULT now(),
        CONSTRAINT pk_push_notification_configs PRIMARY KEY (task_id, config_id),
        CONSTRAINT ck_push_notification_configs_version CHECK (protocol_version IN ('0.3', '1.0'))
      );

      -- Idempotency-Key records: the first successful response of a request, replayed
      -- for the same key and body during 24 hours.
      CREATE TABLE idempotency_keys (
        scope            varchar(100) NOT NULL,
        key              varchar(255) NOT NULL,
        request_hash     bytea NOT NULL,
        response_status  smallint,
        response_body    jsonb,
        created_at       timestamptz(3) NOT NULL DEFAULT now(),
        CONSTRAINT pk_idempotency_keys PRIMARY KEY (scope, key)
      );
      CREATE INDEX ix_idempotency_keys_created ON idempotency_keys (created_at);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TABLE idempotency_keys;
      DROP TABLE push_notification_configs;
      DROP TABLE task_events;
      DROP TABLE artifacts;
      ALTER TABLE tasks DROP CONSTRAINT fk_tasks_status_message;
      DROP TABLE messages;
      DROP TABLE tasks;
      DROP TABLE contexts;
    `);
  }
}
