import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Organizations, Console users and sessions, identities and API keys.
 * Constraints carry the invariants the code relies on: one handle forever, an
 * enabled receiver is always claimed, an admin key never binds an identity.
 * Timestamps are timestamptz(3): millisecond precision round-trips exactly through a
 * JavaScript Date, so keyset cursors built from them never skip or repeat a row.
 */
export class Foundation1763700000000 implements MigrationInterface {
  name = 'Foundation1763700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE organizations (
        id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        name        varchar(100) NOT NULL,
        created_at  timestamptz(3) NOT NULL DEFAULT now()
      );

      CREATE TABLE console_users (
        id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id  uuid NOT NULL REFERENCES organizations(id),
        email            varchar(254) NOT NULL,
        password_hash    varchar(100) NOT NULL,
        created_at       timestamptz(3) NOT NULL DEFAULT now()
      );
      CREATE UNIQUE INDEX uq_console_users_email ON console_users (lower(email));
      CREATE INDEX ix_console_users_organization ON console_users (organization_id);

      CREATE TABLE console_sessions (
        id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        user_id     uuid NOT NULL REFERENCES console_users(id) ON DELETE CASCADE,
        token_hash  bytea NOT NULL,
        created_at  timestamptz(3) NOT NULL DEFAULT now(),
        expires_at  timestamptz(3) NOT NULL,
        revoked_at  timestamptz(3)
      );
      CREATE UNIQUE INDEX uq_console_sessions_token_hash ON console_sessions (token_hash);
      CREATE INDEX ix_console_sessions_user ON console_sessions (user_id);

      CREATE TABLE identities (
        id                     uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        agent_handle           varchar(63) NOT NULL,
        organization_id        uuid REFERENCES organizations(id),
        display_name           varchar(100) NOT NULL DEFAULT '',
        description            varchar(2000) NOT NULL DEFAULT '',
        skills                 jsonb NOT NULL DEFAULT '[]'::jsonb,
        claimed_at             timestamptz(3),
        enabled                boolean NOT NULL DEFAULT false,
        publicly_discoverable  boolean NOT NULL DEFAULT false,
        allow_public_egress    boolean NOT NULL DEFAULT false,
        filter_mode            varchar(16) NOT NULL DEFAULT 'whitelist',
        status                 varchar(16) NOT NULL DEFAULT 'active',
        claim_code_hash        bytea,
        claim_expires_at       timestamptz(3),
        card_version           integer NOT NULL DEFAULT 1,
        created_at             timestamptz(3) NOT NULL DEFAULT now(),
        updated_at             timestamptz(3) NOT NULL DEFAULT now(),
        deleted_at             timestamptz(3),
        CONSTRAINT ck_identities_handle CHECK (agent_handle ~ '^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$'),
        CONSTRAINT ck_identities_filter_mode CHECK (filter_mode IN ('whitelist', 'blacklist')),
        CONSTRAINT ck_identities_status CHECK (status IN ('active', 'deleted')),
        CONSTRAINT ck_identities_claim_has_org CHECK ((claimed_at IS NULL) = (organization_id IS NULL)),
        CONSTRAINT ck_identities_enabled_is_claimed CHECK (NOT enabled OR claimed_at IS NOT NULL),
        CONSTRAINT ck_identities_deleted CHECK ((status = 'deleted') = (deleted_at IS NOT NULL))
      );
      -- Handles are global and never reused: a deleted identity keeps its row.
      CREATE UNIQUE INDEX uq_identities_agent_handle ON identities (agent_handle);
      CREATE UNIQUE INDEX uq_identities_claim_code_hash ON identities (claim_code_hash) WHERE claim_code_hash IS NOT NULL;
      CREATE INDEX ix_identities_organization ON identities (organization_id, created_at DESC, id DESC);

      CREATE TABLE api_keys (
        id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        key_hash         bytea NOT NULL,
        prefix           varchar(16) NOT NULL,
        scope            varchar(8) NOT NULL,
        organization_id  uuid REFERENCES organizations(id),
        identity_id      uuid REFERENCES identities(id),
        label            varchar(100) NOT NULL DEFAULT '',
        description      varchar(2000) NOT NULL DEFAULT '',
        status           varchar(8) NOT NULL DEFAULT 'active',
        created_by_type  varchar(16) NOT NULL,
        created_by_id    uuid,
        created_at       timestamptz(3) NOT NULL DEFAULT now(),
        last_used_at     timestamptz(3),
        revoked_at       timestamptz(3),
        CONSTRAINT ck_api_keys_scope CHECK (scope IN ('admin', 'agent')),
        -- An admin key belongs to an organization; an agent key to an identity (and
        -- through it, to the identity's organization once claimed).
        CONSTRAINT ck_api_keys_binding CHECK (
          (scope = 'admin' AND organization_id IS NOT NULL AND identity_id IS NULL) OR
          (scope = 'agent' AND organization_id IS NULL AND identity_id IS NOT NULL)),
        CONSTRAINT ck_api_keys_status CHECK (status IN ('active', 'revoked')),
        CONSTRAINT ck_api_keys_revoked_at CHECK ((status = 'revoked') = (revoked_at IS NOT NULL)),
        CONSTRAINT ck_api_keys_created_by CHECK (created_by_type IN ('console_user', 'api_key', 'signup'))
      );
      CREATE UNIQUE INDEX uq_api_keys_key_hash ON api_keys (key_hash);
      CREATE INDEX ix_api_keys_organization ON api_keys (organization_id, created_at DESC, id DESC) WHERE organization_id IS NOT NULL;
      CREATE INDEX ix_api_keys_identity ON api_keys (identity_id, created_at DESC, id DESC) WHERE identity_id IS NOT NULL;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TABLE api_keys;
      DROP TABLE identities;
      DROP TABLE console_sessions;
      DROP TABLE console_users;
      DROP TABLE organizations;
    `);
  }
}
