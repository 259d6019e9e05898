import { Injectable } from '@nestjs/common';
import { creationPosition, keyset, type PageQuery } from '../common/pagination';
import { Database, type Tx } from '../database/database';
import { DummyValue, GenerateSql } from '../database/generate-sql';
import type { JsonRow, RowOf } from '../database/row';
import { sql, type Sql } from '../database/sql';
import { hourOf } from '../database/hour-bucket';
import { mergedPage } from '../database/merged-page';
import type { AdmissionDecisionRecord } from './admission-decision.entity';
import type { RuleAction, RuleDirection, RuleParty } from './admission.decision';

/** A party's id and organization as values, or as expressions of the statement that holds them. */
type PartyTerms = { [K in keyof RuleParty]: RuleParty[K] | Sql };
import type { ContactRule } from './contact-rule.entity';
import type { Identity } from '../identities/identity.entity';
import { IDENTITY_COLUMNS, toIdentity, type IdentityRow } from '../identities/identities.repository';

type RuleRow = RowOf<ContactRule>;
/** A protocol call asked about: the caller's identity and the handle it calls. */
export interface CallAsked {
  requesterId: string;
  workerHandle: string;
}

/** What a protocol call's admission reads: both parties (one row when the caller calls itself) and the rules between them. */
export interface CallParties {
  parties: Identity[];
  rules: ContactRule[];
  /** Admission's version the read saw (`admission_version`); null when it found nobody. */
  version: string | null;
}

type DecisionRow = RowOf<AdmissionDecisionRecord>;

/** A new denial for the decisions log (id and time are the database's). */
export type NewDecision = Omit<AdmissionDecisionRecord, 'id' | 'createdAt'>;

/** A new contact rule (id and times are the database's). */
export type NewContactRule = Omit<ContactRule, 'id' | 'createdAt' | 'updatedAt'>;

/** One hour of an organization's admission denials (docs/api.md §13, "The overview"). */
export interface DenialHour {
  hour: number;
  inbound: number;
  outbound: number;
}

/** Whose denials a decisions list shows: an organization's (either side) or one identity's. */
export type DecisionScope = { organizationId: string } | { identityId: string };

const RULE_COLUMNS = sql.raw(
  'id, identity_id, organization_id, direction, action, peer_type, peer_identity_id, peer_organization_id, skills, note, ' +
    'created_at, updated_at',
);
const DECISION_COLUMNS = sql.raw(
  'id, requester_id, requester_handle, requester_organization_id, worker_id, worker_handle, worker_organization_id, ' +
    'skill, reason, decided_by, rule_id, requester_rule, worker_rule, created_at',
);

const toRule = (row: RuleRow): ContactRule => ({
  id: row.id,
  identityId: row.identity_id,
  organizationId: row.organization_id,
  direction: row.direction,
  action: row.action,
  peerType: row.peer_type,
  peerIdentityId: row.peer_identity_id,
  peerOrganizationId: row.peer_organization_id,
  skills: row.skills,
  note: row.note,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

const toDecision = (row: DecisionRow): AdmissionDecisionRecord => ({
  id: row.id,
  requesterId: row.requester_id,
  requesterHandle: row.requester_handle,
  requesterOrganizationId: row.requester_organization_id,
  workerId: row.worker_id,
  workerHandle: row.worker_handle,
  workerOrganizationId: row.worker_organization_id,
  skill: row.skill,
  reason: row.reason,
  decidedBy: row.decided_by,
  ruleId: row.rule_id,
  requesterRule: row.requester_rule,
  workerRule: row.worker_rule,
  createdAt: row.created_at,
});

const EXAMPLE_RULE: NewContactRule = {
  identityId: DummyValue.UUID,
  organizationId: DummyValue.UUID_2,
  direction: 'both',
  action: 'allow',
  peerType: 'organization',
  peerIdentityId: null,
  peerOrganizationId: DummyValue.UUID_2,
  skills: [],
  note: '',
};

/**
 * The statement of AdmissionRepository.rulesBetween (bench/admission.bench.ts explains it).
 */
export function rulesBetween(requester: PartyTerms, worker: PartyTerms): Sql {
  return sql`SELECT ${RULE_COLUMNS} FROM contact_rules
       WHERE identity_id = ${requester.id} AND peer_type = 'identity' AND peer_identity_id = ${worker.id} AND direction IN ('outbound', 'both')
      UNION ALL
      SELECT ${RULE_COLUMNS} FROM contact_rules
       WHERE identity_id = ${requester.id} AND peer_type = 'organization' AND peer_organization_id = ${worker.organizationId}
         AND direction IN ('outbound', 'both')
      UNION ALL
      SELECT ${RULE_COLUMNS} FROM contact_rules
       WHERE identity_id = ${worker.id} AND peer_type = 'identity' AND peer_identity_id = ${requester.id} AND direction IN ('inbound', 'both')
      UNION ALL
      SELECT ${RULE_COLUMNS} FROM contact_rules
       WHERE identity_id = ${worker.id} AND peer_type = 'organization' AND peer_organization_id = ${requester.organizationId}
         AND direction IN ('inbound', 'both')`;
}

/** The calls `callParties` is asked about (its `sql.rows`, declared once). */
const ASKED_COLUMNS = [
  ['requester_id', 'uuid'],
  ['worker_handle', 'text'],
] as const;

/** Admission's tables: contact_rules and admission_decisions. */
@Injectable()
export class AdmissionRepository {
  constructor(private readonly db: Database) {}

  // contact_rules

  /**
   * Every rule that can take part in admitting `requester` to `worker`: the requester's
   * outbound-or-both rules naming the worker or its organization, and the worker's
   * inbound-or-both rules naming the requester or its organization. Four probes of the
   * partial unique indexes, each reading the rules of one owner, peer and two
   * directions (one a set of skills), whatever the number of rules either identity has
   * about others; one prepared statement, or in `tx` when given.
   */
  @GenerateSql({
    params: [
      { id: DummyValue.UUID, organizationId: DummyValue.UUID_2 },
      { id: DummyValue.UUID_2, organizationId: DummyValue.UUID },
    ],
  })
  async rulesBetween(requester: RuleParty, worker: RuleParty, tx?: Tx): Promise<ContactRule[]> {
    const statement = rulesBetween(requester, worker);
    const rows = tx
      ? await this.db.rows<RuleRow>(statement, tx)
      : await this.db.prepared<RuleRow>('contact_rules_between', statement);
    return rows.map(toRule);
  }

  /**
   * Read model: for each protocol call asked about, both parties and every rule that
   * can take part in admitting one to the other, in one round trip on every call: the
   * caller by id and the worker by handle (`identities`, the identities module's
   * table), then the four probes of `rulesBetween` for that pair. Calls arriving
   * together share the statement (AdmissionService coalesces them); each answer is
   * at its position, the rules one JSON array on each party's row, with admission's
   * version in the same snapshot (what a later call of the pair may reuse it at).
   */
  @GenerateSql({ params: [[{ requesterId: DummyValue.UUID, workerHandle: DummyValue.HANDLE }]] })
  async callParties(calls: ReadonlyArray<CallAsked>): Promise<CallParties[]> {
    const column = (name: string): Sql => sql.raw(`p.${name}`);
    const requester = { id: column('requester_id'), organizationId: column('requester_organization_id') };
    const worker = { id: column('worker_id'), organizationId: column('worker_organization_id') };
    const rows = await this.db.rows<
      IdentityRow & { position: number; rules: Array<JsonRow<RuleRow>>; admission_version: string }
    >(
      sql`WITH asked AS (
            SELECT * FROM ${sql.rows(
              'a',
              ASKED_COLUMNS,
              calls.map((c) => [c.requesterId, c.workerHandle]),
            )}),
          pairs AS (
            SELECT a.ord AS position, r.id AS requester_id, r.organization_id AS requester_organization_id,
                   w.id AS worker_id, w.organization_id AS worker_organization_id
              FROM asked a LEFT JOIN identities r ON r.id = a.requester_id LEFT JOIN identities w ON w.agent_handle = a.worker_handle),
          rules AS (
            SELECT p.position, jsonb_agg(x) AS rules FROM pairs p CROSS JOIN LATERAL (${rulesBetween(requester, worker)}) x GROUP BY p.position)
          SELECT a.ord::int AS position, i.*, COALESCE(rules.rules, '[]'::jsonb) AS rules,
                 (SELECT version FROM admission_version)::text AS admission_version
            FROM asked a
            JOIN LATERAL (SELECT ${IDENTITY_COLUMNS} FROM identities WHERE id = a.requester_id OR agent_handle = a.worker_handle) i ON true
            LEFT JOIN rules ON rules.position = a.ord`,
    );
    const answers: CallParties[] = calls.map(() => ({ parties: [], rules: [], version: null }));
    for (const { position, rules, admission_version: version, ...identity } of rows) {
      const answer = answers[position - 1];
      answer.version = version;
      answer.parties.push(toIdentity(identity));
      if (answer.rules.length === 0 && rules.length > 0) {
        answer.rules = rules.map((rule) =>
          toRule({ ...rule, created_at: new Date(rule.created_at), updated_at: new Date(rule.updated_at) }),
        );
      }
    }
    return answers;
  }

  /** The organization's rules, optionally of one owner, direction or action, newest first. */
  @GenerateSql(
    { name: 'organization', params: [DummyValue.UUID, {}, { limit: 50 }] },
    {
      name: 'filtered',
      params: [DummyValue.UUID, { identityId: DummyValue.UUID_2, direction: 'both', action: 'block' }, { limit: 50 }],
    },
  )
  async listRules(
    organizationId: string | null,
    filter: { identityId?: string; direction?: RuleDirection; action?: RuleAction },
    query: PageQuery,
  ): Promise<{ items: ContactRule[]; nextCursor: string | null }> {
    const page = keyset('r', query);
    const rows = await this.db.rows<RuleRow>(
      sql`SELECT ${RULE_COLUMNS} FROM contact_rules r
          ${sql.where([
            sql`organization_id = ${organizationId}`,
            filter.identityId ? sql`identity_id = ${filter.identityId}` : sql.empty,
            filter.direction ? sql`direction = ${filter.direction}` : sql.empty,
            filter.action ? sql`action = ${filter.action}` : sql.empty,
            page.after,
          ])}
          ${page.tail}`,
    );
    const { items, nextCursor } = page.cut(rows, creationPosition);
    return { items: items.map(toRule), nextCursor };
  }

  @GenerateSql({ params: [DummyValue.UUID] })
  async rule(id: string): Promise<ContactRule | null> {
    const row = await this.db.one<RuleRow>(sql`SELECT ${RULE_COLUMNS} FROM contact_rules WHERE id = ${id}`);
    return row ? toRule(row) : null;
  }

  /** The owner's rule naming these skills (sorted, as stored; none: `[]`) and this peer identity in this direction, locked; null when it has none. */
  @GenerateSql({ params: [DummyValue.UUID, DummyValue.UUID_2, 'inbound', []] })
  async identityRule(
    identityId: string,
    peerIdentityId: string,
    direction: RuleDirection,
    skills: readonly string[],
    tx?: Tx,
  ): Promise<ContactRule | null> {
    const row = await this.db.one<RuleRow>(
      sql`SELECT ${RULE_COLUMNS} FROM contact_rules
           WHERE identity_id = ${identityId} AND peer_type = 'identity' AND peer_identity_id = ${peerIdentityId} AND direction = ${direction}
             AND skills = ${skills}::text[]
           FOR UPDATE`,
      tx,
    );
    return row ? toRule(row) : null;
  }

  /** Serializes rule creation per owner for the transaction, so concurrent creates cannot pass the limit together. */
  @GenerateSql({ params: [DummyValue.UUID] })
  async lockRulesOf(identityId: string, tx?: Tx): Promise<void> {
    await this.db.rows(sql`SELECT pg_advisory_xact_lock(hashtextextended(${identityId}, 0))`, tx);
  }

  @GenerateSql({ params: [DummyValue.UUID] })
  async countRules(identityId: string, tx?: Tx): Promise<number> {
    const row = await this.db.one<{ count: number }>(
      sql`SELECT count(*)::int AS count FROM contact_rules WHERE identity_id = ${identityId}`,
      tx,
    );
    return row!.count;
  }

  @GenerateSql({ params: [EXAMPLE_RULE] })
  async insertRule(rule: NewContactRule, tx?: Tx): Promise<ContactRule> {
    const row = await this.db.one<RuleRow>(
      sql`INSERT INTO contact_rules (identity_id, organization_id, direction, action, peer_type, peer_identity_id, peer_organization_id,
                                     skills, note)
          VALUES (${rule.identityId}, ${rule.organizationId}, ${rule.direction}, ${rule.action}, ${rule.peerType},
                  ${rule.peerIdentityId}, ${rule.peerOrganizationId}, ${rule.skills}::text[], ${rule.note})
          RETURNING ${RULE_COLUMNS}`,
      tx,
    );
    return toRule(row!);
  }

  /**
   * Sets the given action, direction, skills and note of the organization's rule;
   * `updated_at` moves only when a value actually changes (`changed`). Null when there
   * is no such rule.
   */
  @GenerateSql({
    params: [DummyValue.UUID, DummyValue.UUID_2, { direction: 'both', action: null, skills: null, note: null }],
  })
  async updateRule(
    organizationId: string,
    id: string,
    changes: {
      direction: RuleDirection | null;
      action: RuleAction | null;
      skills: readonly string[] | null;
      note: string | null;
    },
    tx?: Tx,
  ): Promise<{ rule: ContactRule; changed: boolean } | null> {
    const { direction, action, note } = changes;
    const skills = sql`${changes.skills}::text[]`;
    const row = await this.db.one<RuleRow & { changed: boolean }>(
      sql`UPDATE contact_rules
             SET direction = COALESCE(${direction}, direction), action = COALESCE(${action}, action),
                 skills = COALESCE(${skills}, skills), note = COALESCE(${note}, note),
                 updated_at = CASE WHEN (direction, action, skills, note)
                                        IS DISTINCT FROM (COALESCE(${direction}, direction), COALESCE(${action}, action),
                                                          COALESCE(${skills}, skills), COALESCE(${note}, note))
                                   THEN now() ELSE updated_at END
           WHERE id = ${id} AND organization_id = ${organizationId}
       RETURNING ${RULE_COLUMNS}, (updated_at = now()::timestamptz(3)) AS changed`,
      tx,
    );
    return row ? { rule: toRule(row), changed: row.changed } : null;
  }

  /** Deletes the organization's rule and returns it; null when there is no such rule. */
  @GenerateSql({ params: [DummyValue.UUID, DummyValue.UUID_2] })
  async deleteRule(organizationId: string, id: string, tx?: Tx): Promise<ContactRule | null> {
    const row = await this.db.one<RuleRow>(
      sql`DELETE FROM contact_rules WHERE id = ${id} AND organization_id = ${organizationId} RETURNING ${RULE_COLUMNS}`,
      tx,
    );
    return row ? toRule(row) : null;
  }

  // admission_decisions

  @GenerateSql({
    params: [
      {
        requesterId: DummyValue.UUID,
        requesterHandle: DummyValue.HANDLE,
        requesterOrganizationId: null,
        workerId: DummyValue.UUID_2,
        workerHandle: DummyValue.HANDLE,
        workerOrganizationId: null,
        skill: null,
        reason: 'requester_unclaimed',
        decidedBy: 'requester',
        ruleId: null,
        requesterRule: null,
        workerRule: null,
      },
    ],
  })
  async insertDecision(decision: NewDecision): Promise<void> {
    const d = decision;
    await this.db.execute(
      sql`INSERT INTO admission_decisions (requester_id, requester_handle, requester_organization_id, worker_id, worker_handle,
                                           worker_organization_id, skill, reason, decided_by, rule_id, requester_rule, worker_rule)
          VALUES (${d.requesterId}, ${d.requesterHandle}, ${d.requesterOrganizationId}, ${d.workerId}, ${d.workerHandle},
                  ${d.workerOrganizationId}, ${d.skill}, ${d.reason}, ${d.decidedBy}, ${d.ruleId}, ${json(d.requesterRule)},
                  ${json(d.workerRule)})`,
    );
  }

  /**
   * Denials in which the scope (an organization, or one identity) is the requester or
   * the worker, newest first: two keyset scans, one per side, merged (mergedPage: a
   * denial with the scope on both sides — both participants in the organization, or an
   * identity calling itself — is listed once).
   */
  @GenerateSql(
    { name: 'organization', params: [{ organizationId: DummyValue.UUID }, { limit: 50 }] },
    { name: 'identity', params: [{ identityId: DummyValue.UUID }, { limit: 50 }] },
  )
  async listDecisions(
    scope: DecisionScope,
    query: PageQuery,
  ): Promise<{ items: AdmissionDecisionRecord[]; nextCursor: string | null }> {
    const [requester, worker, value] =
      'organizationId' in scope
        ? [sql.raw('d.requester_organization_id'), sql.raw('d.worker_organization_id'), scope.organizationId]
        : [sql.raw('d.requester_id'), sql.raw('d.worker_id'), scope.identityId];
    const page = keyset('d', query);
    const walk = (side: Sql) =>
      sql`SELECT ${DECISION_COLUMNS} FROM admission_decisions d WHERE ${side} = ${value} AND ${page.after} ${page.tail}`;
    const rows = await this.db.rows<DecisionRow>(mergedPage(page, walk(requester), walk(worker)));
    const { items, nextCursor } = page.cut(rows, creationPosition);
    return { items: items.map(toDecision), nextCursor };
  }

  /**
   * The organization's denials since `since`, per hour (hours since the Unix epoch, UTC):
   * `inbound` where it was the worker, `outbound` where it was the requester (one denial
   * between two of its identities counts on both). A range scan of each side's index.
   */
  @GenerateSql({ params: [DummyValue.UUID, DummyValue.DATE] })
  async denialsPerHour(organizationId: string, since: Date): Promise<DenialHour[]> {
    return this.db.rows<DenialHour>(sql`
      SELECT ${hourOf('d.created_at')} AS hour,
             count(*) FILTER (WHERE d.worker_organization_id = ${organizationId})::int AS inbound,
             count(*) FILTER (WHERE d.requester_organization_id = ${organizationId})::int AS outbound
        FROM admission_decisions d
       WHERE d.created_at >= ${since}
         AND (d.worker_organization_id = ${organizationId} OR d.requester_organization_id = ${organizationId})
       GROUP BY 1`);
  }

  /** Retention: deletes up to `batch` decisions older than `days` (DECISIONS_RETENTION_DAYS); how many went. */
  @GenerateSql({ params: [90, 500] })
  async pruneDecisions(days: number, batch: number): Promise<number> {
    return this.db.execute(sql`
      DELETE FROM admission_decisions WHERE id IN (
        SELECT id FROM admission_decisions WHERE created_at < now() - make_interval(days => ${days}::int)
         LIMIT ${batch} FOR UPDATE SKIP LOCKED)`);
  }
}

/** A jsonb parameter: the driver sends objects as JSON, but explicitly is clearer. */
function json(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}
