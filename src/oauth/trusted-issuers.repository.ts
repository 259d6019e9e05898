import { Injectable } from '@nestjs/common';
import { Database, type Tx } from '../database/database';
import { DummyValue, GenerateSql } from '../database/generate-sql';
import type { RecordOf } from '../database/row';
import { sql } from '../database/sql';
import type { TrustedIssuer } from './trusted-issuer.entity';

export type TrustedIssuerRecord = RecordOf<TrustedIssuer>;
export type NewTrustedIssuer = Omit<TrustedIssuerRecord, 'id' | 'createdAt'>;

/** A trusted issuer's row for a token, with the identity its subject maps to as it stands now (null: none). */
export interface FederatedRecord {
  trustId: string;
  organizationId: string;
  jwksUri: string | null;
  /** The trust's inline JWK Set as text (its keys are parsed once by it), or null. */
  jwks: string | null;
  audience: string;
  subjectClaim: string;
  identityId: string | null;
  identityHandle: string | null;
  identityClaimed: boolean | null;
  identityEnabled: boolean | null;
  /** Admission's version in the same snapshot, as a key's lookup reads it (AgentKeyPrincipal.admissionVersion). */
  admissionVersion: string;
}

const COLUMNS = sql.raw(`id, organization_id AS "organizationId", issuer, jwks_uri AS "jwksUri", jwks, audience,
  subject_claim AS "subjectClaim", subjects, created_at AS "createdAt"`);

/** Every statement on `trusted_issuers`. */
@Injectable()
export class TrustedIssuersRepository {
  constructor(private readonly db: Database) {}

  /** Stores a trust; its record. The (issuer, audience) pair is unique across organizations. */
  @GenerateSql({
    params: [
      {
        organizationId: DummyValue.UUID,
        issuer: 'https://issuer.example',
        jwksUri: null,
        jwks: null,
        audience: 'https://service.example',
        subjectClaim: 'sub',
        subjects: {},
      } satisfies NewTrustedIssuer,
    ],
  })
  async insert(trust: NewTrustedIssuer, tx?: Tx): Promise<TrustedIssuerRecord> {
    const row = await this.db.one<TrustedIssuerRecord>(
      sql`
      INSERT INTO trusted_issuers (organization_id, issuer, jwks_uri, jwks, audience, subject_claim, subjects)
      VALUES (${trust.organizationId}, ${trust.issuer}, ${trust.jwksUri}, ${jsonOrNull(trust.jwks)}::jsonb,
              ${trust.audience}, ${trust.subjectClaim}, ${JSON.stringify(trust.subjects)}::jsonb)
      RETURNING ${COLUMNS}`,
      tx,
    );
    return row!;
  }

  /** The organization's trusts, newest first (an organization has few). */
  @GenerateSql({ params: [DummyValue.UUID] })
  async list(organizationId: string): Promise<TrustedIssuerRecord[]> {
    return this.db.rows<TrustedIssuerRecord>(
      sql`SELECT ${COLUMNS} FROM trusted_issuers WHERE organization_id = ${organizationId} ORDER BY created_at DESC, id DESC LIMIT 200`,
    );
  }

  @GenerateSql({ params: [DummyValue.UUID, DummyValue.UUID] })
  async find(id: string, organizationId: string): Promise<TrustedIssuerRecord | null> {
    return this.db.one<TrustedIssuerRecord>(
      sql`SELECT ${COLUMNS} FROM trusted_issuers WHERE id = ${id} AND organization_id = ${organizationId}`,
    );
  }

  /** The organization's trust `id`, locked until `tx` ends (it is about to be changed). */
  @GenerateSql({ params: [DummyValue.UUID, DummyValue.UUID] })
  async findForUpdate(id: string, organizationId: string, tx?: Tx): Promise<TrustedIssuerRecord | null> {
    return this.db.one<TrustedIssuerRecord>(
      sql`SELECT ${COLUMNS} FROM trusted_issuers WHERE id = ${id} AND organization_id = ${organizationId} FOR UPDATE`,
      tx,
    );
  }

  /** Writes the trust `id` as `trust` (its organization unchanged); the trust as it is now. */
  @GenerateSql({
    params: [
      DummyValue.UUID,
      {
        organizationId: DummyValue.UUID,
        issuer: 'https://issuer.example',
        jwksUri: null,
        jwks: null,
        audience: 'https://service.example',
        subjectClaim: 'sub',
        subjects: {},
      } satisfies NewTrustedIssuer,
    ],
  })
  async update(id: string, trust: NewTrustedIssuer, tx?: Tx): Promise<TrustedIssuerRecord | null> {
    return this.db.one<TrustedIssuerRecord>(
      sql`
      UPDATE trusted_issuers
         SET issuer = ${trust.issuer}, jwks_uri = ${trust.jwksUri}, jwks = ${jsonOrNull(trust.jwks)}::jsonb,
             audience = ${trust.audience}, subject_claim = ${trust.subjectClaim},
             subjects = ${JSON.stringify(trust.subjects)}::jsonb
       WHERE id = ${id} AND organization_id = ${trust.organizationId}
      RETURNING ${COLUMNS}`,
      tx,
    );
  }

  /** Removes the organization's trust `id`; the trust removed, or null if there was none. */
  @GenerateSql({ params: [DummyValue.UUID, DummyValue.UUID] })
  async delete(id: string, organizationId: string, tx?: Tx): Promise<TrustedIssuerRecord | null> {
    return this.db.one<TrustedIssuerRecord>(
      sql`DELETE FROM trusted_issuers WHERE id = ${id} AND organization_id = ${organizationId} RETURNING ${COLUMNS}`,
      tx,
    );
  }

  /**
   * Read model: which of `handles` are active identities of the organization
   * (`identities`, owned by the identities module), to check a trust's subjects when it
   * is saved (handles are never reused, so a subject maps to one identity for good).
   */
  @GenerateSql({ params: [DummyValue.UUID, [DummyValue.HANDLE]] })
  async existingHandles(organizationId: string, handles: string[], tx?: Tx): Promise<string[]> {
    const rows = await this.db.rows<{ handle: string }>(
      sql`
      SELECT agent_handle AS handle FROM identities
       WHERE organization_id = ${organizationId} AND agent_handle = ANY(${handles}::text[]) AND status = 'active'`,
      tx,
    );
    return rows.map((row) => row.handle);
  }

  /**
   * Read model: the trust a token of `issuer` for one of `audiences` falls under, and the
   * identity its subject maps to (`identities`, owned by the identities module) as it
   * stands now — one indexed statement per request, as a key's lookup is: the subject
   * is read from `claims` by the trust's own `subject_claim`. Only an identity of the
   * trust's organization that is not deleted is returned. Like a key's lookup it also
   * reads admission's version (`admission_version`, the admission module's), so that a
   * protocol call of the token needs no read of its parties when they are unchanged.
   */
  @GenerateSql({ params: ['https://issuer.example', ['https://service.example'], { sub: 'workload' }] })
  async federated(issuer: string, audiences: string[], claims: object): Promise<FederatedRecord[]> {
    return this.db.rows<FederatedRecord>(sql`
      SELECT t.id AS "trustId", t.organization_id AS "organizationId", t.jwks_uri AS "jwksUri", t.jwks::text AS jwks,
             t.audience,
             t.subject_claim AS "subjectClaim", i.id AS "identityId", i.agent_handle AS "identityHandle",
             (i.claimed_at IS NOT NULL) AS "identityClaimed", i.enabled AS "identityEnabled",
             (SELECT version FROM admission_version)::text AS "admissionVersion"
        FROM trusted_issuers t
        LEFT JOIN identities i
          ON i.agent_handle = t.subjects ->> (${JSON.stringify(claims)}::jsonb ->> t.subject_claim)
         AND i.organization_id = t.organization_id AND i.status = 'active'
       WHERE t.issuer = ${issuer} AND t.audience = ANY(${audiences}::text[])
       LIMIT 2`);
  }

  /** Whether a trust still takes its keys from `issuer` and `jwksUri` (fetched keys are kept while one does). */
  @GenerateSql({ params: ['https://issuer.example', null] })
  async keysInUse(issuer: string, jwksUri: string | null): Promise<boolean> {
    const row = await this.db.one(sql`
      SELECT 1 AS one FROM trusted_issuers
       WHERE issuer = ${issuer} AND jwks_uri IS NOT DISTINCT FROM ${jwksUri} AND jwks IS NULL LIMIT 1`);
    return row !== null;
  }

  /** Whether the trust `id` still exists (a federated call's standing while it stays open). */
  @GenerateSql({ params: [DummyValue.UUID] })
  async exists(id: string): Promise<boolean> {
    return (await this.db.one(sql`SELECT 1 AS one FROM trusted_issuers WHERE id = ${id}`)) !== null;
  }
}

function jsonOrNull(value: object | null): string | null {
  return value === null ? null : JSON.stringify(value);
}
