import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Contact rules and the log of admission denials (docs/api.md §6).
 *
 * The pair lookup on every protocol call reads at most eight rules through the two
 * partial unique indexes (owner, peer, direction): its cost does not depend on how
 * many rules an identity has. The same indexes make "one rule per owner, direction
 * and peer" an invariant (→ 409). `organization_id` is the owner's organization,
 * copied at creation: an identity is only ever claimed once, so it never changes, and
 * it lets an organization list its rules without reading the identities table.
 */
export class Admission1763700200000 implements MigrationInterface {
  name = 'Admission1763700200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE contact_rules (
        id                    uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        identity_id           uuid NOT NULL CONSTRAINT fk_contact_rules_identity REFERENCES identities(id),
        organization_id       uuid NOT NULL CONSTRAINT fk_contact_rules_organization REFERENCES organizations(id),
        direction             varchar(8) NOT NULL,
        action                varchar(8) NOT NULL,
        peer_type             varchar(16) NOT NULL,
        peer_identity_id      uuid CONSTRAINT fk_contact_rules_peer_identity REFERENCES identities(id),
        peer_organization_id  uuid CONSTRAINT fk_contact_rules_peer_organization REFERENCES organizations(id),
        note                  varchar(500) NOT NULL DEFAULT '',
        created_at            timestamptz(3) NOT NULL DEFAULT now(),
        updated_at            timestamptz(3) NOT NULL DEFAULT now(),
        CONSTRAINT ck_contact_rules_direction CHECK (direction IN ('inbound', 'outbound', 'both')),
        CONSTRAINT ck_contact_rules_action CHECK (action IN ('allow', 'block')),
        CONSTRAINT ck_contact_rules_peer CHECK (
          (peer_type = 'identity' AND peer_identity_id IS NOT NULL AND peer_organization_id IS NULL) OR
          (peer_type = 'organization' AND peer_organization_id IS NOT NULL AND peer_identity_id IS NULL)),
        CONSTRAINT ck_contact_rules_not_self CHECK (peer_identity_id IS DISTINCT FROM identity_id)
      );
      -- One rule per owner, direction and peer; also the pair lookup of every admission.
      CREATE UNIQUE INDEX uq_contact_rules_identity_peer
        ON contact_rules (identity_id, peer_identity_id, direction) WHERE peer_type = 'identity';
      CREATE UNIQUE INDEX uq_contact_rules_organization_peer
        ON contact_rules (identity_id, peer_organization_id, direction) WHERE peer_type = 'organization';
      -- Lists (keyset pages) per organization and per owner; the per-owner limit count.
      CREATE INDEX ix_contact_rules_organization ON contact_rules (organization_id, created_at DESC, id DESC);
      CREATE INDEX ix_contact_rules_identity ON contact_rules (identity_id, created_at DESC, id DESC);

      -- Denials only. The participants are copied (handles are never reused, an identity's
      -- organization never changes) and each side's effective rule is kept as it was shown
      -- then, so the log explains past decisions after the rules have changed.
      CREATE TABLE admission_decisions (
        id                         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        requester_id               uuid NOT NULL,
        requester_handle           varchar(63) NOT NULL,
        requester_organization_id  uuid,
        worker_id                  uuid NOT NULL,
        worker_handle              varchar(63) NOT NULL,
        worker_organization_id     uuid,
        reason                     varchar(32) NOT NULL,
        decided_by                 varchar(16) NOT NULL,
        rule_id                    uuid,
        requester_rule             jsonb,
        worker_rule                jsonb,
        created_at                 timestamptz(3) NOT NULL DEFAULT now(),
        CONSTRAINT ck_admission_decisions_reason CHECK (reason IN (
          'blocked_by_requester', 'blocked_by_worker', 'not_permitted_by_requester', 'not_permitted_by_worker',
          'requester_unclaimed', 'requester_disabled', 'worker_unavailable')),
        CONSTRAINT ck_admission_decisions_decided_by CHECK (decided_by IN ('requester', 'worker'))
      );
      CREATE INDEX ix_admission_decisions_requester_organization
        ON admission_decisions (requester_organization_id, created_at DESC, id DESC) WHERE requester_organization_id IS NOT NULL;
      CREATE INDEX ix_admission_decisions_worker_organization
        ON admission_decisions (worker_organization_id, created_at DESC, id DESC) WHERE worker_organization_id IS NOT NULL;
      CREATE INDEX ix_admission_decisions_requester ON admission_decisions (requester_id, created_at DESC, id DESC);
      CREATE INDEX ix_admission_decisions_worker ON admission_decisions (worker_id, created_at DESC, id DESC);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TABLE admission_decisions;
      DROP TABLE contact_rules;
    `);
  }
}
