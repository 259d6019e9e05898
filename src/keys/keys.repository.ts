import { Injectable } from '@nestjs/common';
import { encodeCursor, recordCreationPosition, keyset, type PageQuery } from '../common/pagination';
import { isUuid } from '../common/parse-id.pipe';
import { Database, type Tx } from '../database/database';
import { DummyValue, GenerateSql } from '../database/generate-sql';
import type { RecordOf } from '../database/row';
import { sql, type Sql } from '../database/sql';
import type { ApiKey, KeyCreatorType, KeyStatus } from './api-key.entity';
import type { KeyScope } from './key-format';

/** A key as every read returns it: the entity's columns without the hash and the expiry notice's mark. */
export type KeyRecord = Omit<RecordOf<ApiKey>, 'keyHash' | 'expiryNotifiedAt'>;

/** Authentication's record: the key's metadata plus its bound identity's state. */
export type VerifiedKey = KeyRecord & {
  /** Where the key stands, by the database's clock as the statement ran (STANDING). */
  standing: KeyStanding;
  identityHandle: string | null;
  identityClaimed: boolean | null;
  identityEnabled: boolean | null;
  /** Admission's version as this statement saw it (`admission_version`; AdmissionService.admitCall). */
  admissionVersion: string;
};

/** A key to store; the caller has decided the binding is allowed. */
export interface NewKey {
  keyHash: Buffer;
  prefix: string;
  scope: KeyScope;
  organizationId: string | null;
  identityId: string | null;
  label: string;
  description: string;
  createdByType: KeyCreatorType;
  createdById: string | null;
  /** When it expires; or, when null, `lifetimeDays` after its creation (both null: never). */
  expiresAt: Date | null;
  lifetimeDays: number | null;
}

/** The filters of `GET /api-keys` besides the organization. */
export interface KeyListFilter extends PageQuery {
  scope?: KeyScope;
  status?: KeyStatus;
  /** Handle or id of the bound identity. */
  identity?: string;
  /** Only active keys that have not expired yet and expire within this many days. */
  expiringWithinDays?: number;
}

/** Where a key stands, as authentication would see it now. */
export type KeyStanding = 'active' | 'expired' | 'revoked';

/** Which active keys a revocation ends: one key, or every key bound to an identity. */
export type KeySelection = { id: string } | { identityId: string };

/**
 * Key metadata with the organization resolved: an admin key carries its own, an
 * agent key takes its identity's. Named as KeyRecord's properties, so rows arrive as records.
 */
const METADATA_COLUMNS =
  sql.raw(`k.id, k.scope, k.identity_id AS "identityId", COALESCE(k.organization_id, i.organization_id) AS "organizationId",
  k.label, k.description, k.status, k.prefix, k.created_at AS "createdAt", k.created_by_type AS "createdByType",
  k.created_by_id AS "createdById", k.last_used_at AS "lastUsedAt", k.revoked_at AS "revokedAt",
  k.expires_at AS "expiresAt"`);
const FROM_KEYS = sql.raw(`FROM api_keys k LEFT JOIN identities i ON i.id = k.identity_id`);

/**
 * Where the key `k` stands, by the database's clock as the statement runs: the one
 * definition authentication and the re-checks of open calls share. A revoked key stands
 * as revoked even once its `expires_at` has passed; a key without one never expires.
 */
const STANDING = sql.raw(
  `CASE WHEN k.status <> 'active' THEN 'revoked' WHEN k.expires_at <= now() THEN 'expired' ELSE 'active' END`,
);

/** Authentication's read of the keys that `probes` (numbered by `position`) name, matched `on` them (findByHashes). */
function verifiedKeys(probes: Sql, on: Sql): Sql {
  return sql`
      SELECT q.position::int AS position, ${METADATA_COLUMNS}, i.agent_handle AS "identityHandle",
             (i.claimed_at IS NOT NULL) AS "identityClaimed", i.enabled AS "identityEnabled",
             ${STANDING} AS standing,
             (SELECT version FROM admission_version)::text AS "admissionVersion"
        FROM ${probes}
        JOIN api_keys k ON ${on}
        LEFT JOIN identities i ON i.id = k.identity_id`;
}

/**
 * Read model: key metadata joined to the bound identity (`identities`, owned by the
 * identities module). An agent key's organization is its identity's, so every key
 * read resolves it here in the same indexed statement rather than a second round
 * trip per key (lists would otherwise cost one lookup per row).
 */
function selectMetadata(where: Sql): Sql {
  return sql`SELECT ${METADATA_COLUMNS}
  ${FROM_KEYS}
  WHERE ${where}`;
}

/** Every statement on `api_keys`. */
@Injectable()
export class KeysRepository {
  constructor(private readonly db: Database) {}

  /**
   * Read model: authentication's lookup by key hash, the key's metadata plus the
   * bound identity's handle, claim and enabled state (`identities`, owned by the
   * identities module). Every authenticated request runs it, so it stays one
   * indexed statement, prepared once per connection (`verify_api_keys`), instead of
   * a key read followed by an identity read. It takes several hashes, so that
   * requests arriving together share one round trip (KeyLookup); `position` is the
   * 1-based index in `keyHashes` of the hash a row answers. It also reads admission's
   * version (`admission_version`, the admission module's), in the same snapshot: a
   * protocol call whose pair was read at that version needs no read of its parties
   * (AdmissionService.admitCall) — one row, read once per statement. Where the key
   * stands (revoked, expired) is decided here, as `standing` decides it for open calls.
   */
  @GenerateSql({ params: [[DummyValue.BUFFER]] })
  async findByHashes(keyHashes: Buffer[]): Promise<Array<VerifiedKey & { position: number }>> {
    return this.db.prepared<VerifiedKey & { position: number }>(
      'verify_api_keys',
      verifiedKeys(
        sql`unnest(${keyHashes}::bytea[]) WITH ORDINALITY AS q(key_hash, position)`,
        sql.raw('k.key_hash = q.key_hash'),
      ),
    );
  }

  /**
   * Read model: the same lookup by key id, for access tokens (docs/api.md §17), which
   * name their key by id: the same columns and the same STANDING, so a token's key is
   * decided exactly as the key itself would be on that request (prepared, batched alike).
   */
  @GenerateSql({ params: [[DummyValue.UUID]] })
  async findByIds(ids: string[]): Promise<Array<VerifiedKey & { position: number }>> {
    return this.db.prepared<VerifiedKey & { position: number }>(
      'verify_api_key_ids',
      verifiedKeys(sql`unnest(${ids}::uuid[]) WITH ORDINALITY AS q(key_id, position)`, sql.raw('k.id = q.key_id')),
    );
  }

  /**
   * Where a key stands: revoked (or gone), expired, or active (one primary-key probe,
   * prepared: streams ask each time they wake).
   */
  @GenerateSql({ params: [DummyValue.UUID] })
  async standing(id: string): Promise<KeyStanding> {
    const [row] = await this.db.prepared<{ standing: KeyStanding }>(
      'api_key_status',
      sql`SELECT ${STANDING} AS standing FROM api_keys k WHERE k.id = ${id}`,
    );
    return row?.standing ?? 'revoked';
  }

  @GenerateSql({ params: [DummyValue.UUID] })
  async countActiveForIdentity(identityId: string, tx?: Tx): Promise<number> {
    const row = await this.db.one<{ count: number }>(
      sql`SELECT count(*)::int AS count FROM api_keys WHERE identity_id = ${identityId} AND status = 'active'`,
      tx,
    );
    return row?.count ?? 0;
  }

  /** Stores an active key; its id. */
  @GenerateSql({
    params: [
      {
        keyHash: DummyValue.BUFFER,
        prefix: 'a2a_adm_Ab3d',
        scope: 'admin',
        organizationId: null,
        identityId: null,
        label: '',
        description: '',
        createdByType: 'signup',
        createdById: null,
        expiresAt: null,
        lifetimeDays: 90,
      } satisfies NewKey,
    ],
  })
  async insert(key: NewKey, tx?: Tx): Promise<string> {
    const row = await this.db.one<Pick<KeyRecord, 'id'>>(
      sql`
      INSERT INTO api_keys (key_hash, prefix, scope, organization_id, identity_id, label, description, status, created_by_type, created_by_id,
                            expires_at)
      VALUES (${key.keyHash}, ${key.prefix}, ${key.scope}, ${key.organizationId}, ${key.identityId}, ${key.label}, ${key.description},
              'active', ${key.createdByType}, ${key.createdById},
              COALESCE(${key.expiresAt}::timestamptz, now() + make_interval(days => ${key.lifetimeDays}::int)))
      RETURNING id`,
      tx,
    );
    return row!.id;
  }

  /** A key's metadata by id, or null. */
  @GenerateSql({ params: [DummyValue.UUID] })
  async findById(id: string, tx?: Tx): Promise<KeyRecord | null> {
    return this.db.one<KeyRecord>(selectMetadata(sql`k.id = ${id}`), tx);
  }

  /**
   * One page of the organization's keys, newest first. The identity filter takes an
   * id or a handle (matched on the joined identity of the metadata read model).
   */
  @GenerateSql(
    { name: 'first page', params: [DummyValue.UUID, {}] },
    { name: 'filtered', params: [DummyValue.UUID, { scope: 'agent', status: 'active', identity: DummyValue.HANDLE }] },
    { name: 'expiring', params: [DummyValue.UUID, { expiringWithinDays: 7 }] },
    {
      name: 'by identity id',
      params: [
        DummyValue.UUID,
        {
          identity: DummyValue.UUID_2,
          cursor: encodeCursor({ at: DummyValue.DATE.toISOString(), id: DummyValue.UUID }),
        },
      ],
    },
  )
  async list(
    organizationId: string | null,
    filter: KeyListFilter,
  ): Promise<{ items: KeyRecord[]; nextCursor: string | null }> {
    const page = keyset('k', filter);
    const identity =
      filter.identity === undefined
        ? sql.empty
        : isUuid(filter.identity)
          ? sql`k.identity_id = ${filter.identity}::uuid`
          : sql`i.agent_handle = ${filter.identity}`;
    const where = sql.join(
      [
        sql`(k.organization_id = ${organizationId} OR i.organization_id = ${organizationId})`,
        filter.scope ? sql`k.scope = ${filter.scope}` : sql.empty,
        filter.status ? sql`k.status = ${filter.status}` : sql.empty,
        filter.expiringWithinDays === undefined
          ? sql.empty
          : sql`k.status = 'active' AND k.expires_at > now()
                AND k.expires_at <= now() + make_interval(days => ${filter.expiringWithinDays}::int)`,
        identity,
        page.after,
      ],
      ' AND ',
    );
    const rows = await this.db.rows<KeyRecord>(sql`${selectMetadata(where)} ${page.tail}`);
    return page.cut(rows, recordCreationPosition);
  }

  /** Label and description (the fields Console may change). */
  @GenerateSql({ params: [DummyValue.UUID, { label: DummyValue.STRING, description: DummyValue.STRING }] })
  async update(id: string, changes: { label?: string; description?: string }, tx?: Tx): Promise<void> {
    const sets = sql.join([
      changes.label !== undefined ? sql`label = ${changes.label}` : sql.empty,
      changes.description !== undefined ? sql`description = ${changes.description}` : sql.empty,
    ]);
    if (sets.isEmpty) {
      return;
    }
    await this.db.execute(sql`UPDATE api_keys SET ${sets} WHERE id = ${id}`, tx);
  }

  /** Revokes the selected active keys; the metadata of those it revoked. */
  @GenerateSql(
    { name: 'one key', params: [{ id: DummyValue.UUID }] },
    { name: "an identity's keys", params: [{ identityId: DummyValue.UUID }] },
  )
  async revoke(selection: KeySelection, tx?: Tx): Promise<KeyRecord[]> {
    const which = 'id' in selection ? sql`id = ${selection.id}` : sql`identity_id = ${selection.identityId}`;
    const revoked = await this.db.rows<Pick<KeyRecord, 'id'>>(
      sql`UPDATE api_keys SET status = 'revoked', revoked_at = now() WHERE ${which} AND status = 'active' RETURNING id`,
      tx,
    );
    if (revoked.length === 0) {
      return [];
    }
    return this.db.rows<KeyRecord>(selectMetadata(sql`k.id = ANY(${revoked.map((row) => row.id)}::uuid[])`), tx);
  }

  /**
   * Read model: marks up to `batch` active keys that expire within `days` and have had no
   * `api_key.expiring` notice, and returns their metadata (with the organization an
   * agent key takes from its identity, as every key read). One statement, so the
   * periodic pass is one round trip a batch; keys another process is marking are skipped
   * (SKIP LOCKED), so any number of passes may run at once and none marks a key twice.
   */
  @GenerateSql({ params: [7, 500] })
  async markExpiring(days: number, batch: number, tx?: Tx): Promise<KeyRecord[]> {
    return this.db.rows<KeyRecord>(
      sql`
      WITH due AS (
        SELECT id FROM api_keys
         WHERE status = 'active' AND expires_at IS NOT NULL AND expiry_notified_at IS NULL
           AND expires_at > now() AND expires_at <= now() + make_interval(days => ${days}::int)
         ORDER BY expires_at
         LIMIT ${batch}
           FOR UPDATE SKIP LOCKED
      ), marked AS (
        UPDATE api_keys SET expiry_notified_at = now() FROM due WHERE api_keys.id = due.id RETURNING api_keys.id
      )
      ${selectMetadata(sql`k.id IN (SELECT id FROM marked)`)}
      ORDER BY k.expires_at, k.id`,
      tx,
    );
  }

  /** Writes noted uses: each key's `last_used_at` moves forward only. */
  @GenerateSql({ params: [[DummyValue.UUID], [DummyValue.DATE]] })
  async recordUsage(ids: string[], at: Date[]): Promise<void> {
    await this.db.execute(sql`
      UPDATE api_keys AS k SET last_used_at = u.at
        FROM unnest(${ids}::uuid[], ${at.map((d) => d.toISOString())}::timestamptz[]) AS u(id, at)
       WHERE k.id = u.id AND (k.last_used_at IS NULL OR k.last_used_at < u.at)`);
  }
}
