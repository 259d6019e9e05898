import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { badRequest, conflict } from '../common/app-error';
import { requireAccess, requireGrant, type Permission } from '../auth/access';
import { HotQuery } from '../database/hot-query';
import { isUuid } from '../common/parse-id.pipe';
import { creationPosition, decodeCursor, keysetAfter, pageLimit, pageOf } from '../common/pagination';
import type { AdminKeyPrincipal, ConsolePrincipal, KeyPrincipal, Principal } from '../auth/principal';
import { EventsService } from '../events/events.service';
import { ApiKey, type KeyCreatorType } from './api-key.entity';
import { DISPLAY_PREFIX_LENGTH, generateApiKey, hashApiKey, parseApiKey, type KeyScope } from './key-format';
import { toKeyMetadata, type KeyMetadata, type KeyRow } from './key-metadata';
import { KeyUsageTracker } from './key-usage.tracker';
import type { MintKeyDto } from './dto/mint-key.dto';
import type { UpdateKeyDto } from './dto/update-key.dto';
import type { ListKeysQuery } from './dto/list-keys.query';

/** CONTRACT §10: at most this many active keys per identity. */
export const MAX_ACTIVE_KEYS_PER_IDENTITY = 20;

/**
 * Key metadata with the organization resolved: an admin key carries its own, an
 * agent key takes its identity's. The Keys module reads these identity columns
 * itself so that authentication stays one indexed round trip.
 */
const METADATA_COLUMNS = `
  k.id, k.scope, k.identity_id, COALESCE(k.organization_id, i.organization_id) AS organization_id,
  k.label, k.description, k.status, k.prefix, k.created_at, k.created_by_type, k.created_by_id,
  k.last_used_at, k.revoked_at`;
const FROM_KEYS = `FROM api_keys k LEFT JOIN identities i ON i.id = k.identity_id`;
const SELECT_METADATA = `SELECT ${METADATA_COLUMNS} ${FROM_KEYS}`;
/** Authentication: the metadata plus the bound identity's state, by key hash. */
const SELECT_VERIFIED = `
  SELECT ${METADATA_COLUMNS}, i.agent_handle AS identity_handle,
         (i.claimed_at IS NOT NULL) AS identity_claimed, i.enabled AS identity_enabled
    ${FROM_KEYS}
   WHERE k.key_hash = $1`;

export interface KeyBinding {
  scope: KeyScope;
  /** Admin keys: the organization. */
  organizationId?: string;
  /** Agent keys: the identity. */
  identityId?: string;
  label?: string;
  description?: string;
  createdBy: { type: KeyCreatorType; id: string | null };
}

/** Who a key minted on a principal's request was created by. */
export function creatorOf(principal: AdminKeyPrincipal | ConsolePrincipal): KeyBinding['createdBy'] {
  return principal.kind === 'console' ? { type: 'console_user', id: principal.id } : { type: 'api_key', id: principal.id };
}

export interface MintedKey {
  metadata: KeyMetadata;
  /** The plaintext, returned once and never again. */
  key: string;
}

interface VerifiedKeyRow extends KeyRow {
  identity_handle: string | null;
  identity_claimed: boolean | null;
  identity_enabled: boolean | null;
}

@Injectable()
export class KeysService {
  private readonly verified = new WeakMap<KeyPrincipal, KeyRow>();

  constructor(
    private readonly dataSource: DataSource,
    private readonly hot: HotQuery,
    private readonly usage: KeyUsageTracker,
    private readonly events: EventsService,
  ) {}

  /**
   * The principal behind a plaintext key, or null when the key is malformed,
   * unknown or revoked. A malformed key never reaches the database.
   */
  async verify(raw: string): Promise<KeyPrincipal | null> {
    if (!parseApiKey(raw)) return null;
    const [row] = await this.hot.rows<VerifiedKeyRow>('verify_api_key', SELECT_VERIFIED, [hashApiKey(raw)]);
    if (!row || row.status !== 'active') return null;
    this.usage.touch(row.id);
    const principal: KeyPrincipal = row.scope === 'admin'
      ? { kind: 'admin', id: row.id, organizationId: row.organization_id! }
      : {
          kind: 'agent',
          id: row.id,
          organizationId: row.organization_id,
          identity: {
            id: row.identity_id!,
            handle: row.identity_handle!,
            claimed: row.identity_claimed === true,
            enabled: row.identity_enabled === true,
          },
        };
    // Authentication already read the key's metadata; GET /api-keys/self reuses it
    // for this request instead of a second round trip.
    this.verified.set(principal, row);
    return principal;
  }

  /**
   * Whether a key authenticated earlier is still active. Protocol streams and blocking
   * sends ask each time they wake, so a revocation ends them too (one primary-key probe).
   */
  async isActive(keyId: string): Promise<boolean> {
    const [row] = await this.hot.rows<{ status: string }>('api_key_status', `SELECT status FROM api_keys WHERE id = $1`, [keyId]);
    return row?.status === 'active';
  }

  /** `POST /api/v1/api-keys`: the "Who may mint" table of SEED-SPEC §5. */
  async mint(principal: Principal, dto: MintKeyDto): Promise<MintedKey> {
    const scope = dto.scope ?? 'agent';
    requireGrant(principal, scope === 'admin' ? 'key.mintAdmin' : 'key.mintAgent');
    const minter = principal as AdminKeyPrincipal | ConsolePrincipal; // requireGrant refuses agent keys
    if (scope === 'admin' && dto.scoped_identity_id) {
      throw badRequest('validation_failed', 'An admin-scoped key is not bound to an identity.', [
        { field: 'scoped_identity_id', message: 'scoped_identity_id must be omitted for admin-scoped keys' },
      ]);
    }
    if (scope === 'agent' && !dto.scoped_identity_id) {
      throw badRequest('validation_failed', 'An agent-scoped key needs scoped_identity_id.', [
        { field: 'scoped_identity_id', message: 'scoped_identity_id is required for agent-scoped keys' },
      ]);
    }
    const createdBy = creatorOf(minter);
    return this.dataSource.transaction(async (em) => {
      if (scope === 'agent') await this.lockBindableIdentity(em, principal, dto.scoped_identity_id!);
      return this.mintWith(em, {
        scope,
        organizationId: scope === 'admin' ? minter.organizationId : undefined,
        identityId: scope === 'agent' ? dto.scoped_identity_id : undefined,
        label: dto.label,
        description: dto.description,
        createdBy,
      });
    });
  }

  /**
   * Mints inside a caller's transaction (identity creation with `mint_key`, agent
   * signup, bootstrap). The caller has already decided the binding is allowed.
   */
  async mintWith(em: EntityManager, binding: KeyBinding): Promise<MintedKey> {
    if (binding.identityId) {
      const [{ count }] = (await em.query(
        `SELECT count(*)::int AS count FROM api_keys WHERE identity_id = $1 AND status = 'active'`,
        [binding.identityId],
      )) as Array<{ count: number }>;
      if (count >= MAX_ACTIVE_KEYS_PER_IDENTITY) {
        throw conflict('key_limit_reached', `An identity can have at most ${MAX_ACTIVE_KEYS_PER_IDENTITY} active keys; revoke one first.`);
      }
    }
    const key = generateApiKey(binding.scope);
    const inserted = await em.getRepository(ApiKey).insert({
      keyHash: hashApiKey(key),
      prefix: key.slice(0, DISPLAY_PREFIX_LENGTH),
      scope: binding.scope,
      organizationId: binding.organizationId ?? null,
      identityId: binding.identityId ?? null,
      label: binding.label ?? '',
      description: binding.description ?? '',
      status: 'active',
      createdByType: binding.createdBy.type,
      createdById: binding.createdBy.id,
    });
    const id = inserted.identifiers[0].id as string;
    const metadata = this.present(await this.rowOf(em, id));
    await this.events.emit(em, { type: 'api_key.created', organizationId: metadata.organization_id, data: { api_key: metadata } });
    return { metadata, key };
  }

  async list(principal: KeyPrincipal | ConsolePrincipal, query: ListKeysQuery): Promise<{ api_keys: KeyMetadata[]; next_cursor: string | null }> {
    const limit = pageLimit(query);
    const cursor = decodeCursor(query.cursor);
    const params: unknown[] = [principal.organizationId];
    const where = ['(k.organization_id = $1 OR i.organization_id = $1)'];
    if (query.scope) where.push(`k.scope = $${params.push(query.scope)}`);
    if (query.status) where.push(`k.status = $${params.push(query.status)}`);
    if (query.identity) {
      const p = params.push(query.identity);
      where.push(isUuid(query.identity) ? `k.identity_id = $${p}::uuid` : `i.agent_handle = $${p}`);
    }
    where.push(...keysetAfter('k', cursor, params));
    const rows = (await this.dataSource.query(
      `${SELECT_METADATA} WHERE ${where.join(' AND ')} ORDER BY k.created_at DESC, k.id DESC LIMIT ${limit + 1}`,
      params,
    )) as KeyRow[];
    const page = pageOf(rows, limit, creationPosition);
    return { api_keys: page.items.map((row) => this.present(row)), next_cursor: page.nextCursor };
  }

  async get(principal: KeyPrincipal | ConsolePrincipal, id: string): Promise<KeyMetadata> {
    return this.present(await this.findInOrganization(this.dataSource.manager, principal, 'key.read', id));
  }

  /** Console only (enforced by the route's surface): label and description. */
  async update(principal: ConsolePrincipal, id: string, dto: UpdateKeyDto): Promise<KeyMetadata> {
    return this.dataSource.transaction(async (em) => {
      await this.findInOrganization(em, principal, 'key.edit', id);
      const changes: Partial<ApiKey> = {};
      if (dto.label !== undefined) changes.label = dto.label;
      if (dto.description !== undefined) changes.description = dto.description;
      if (Object.keys(changes).length > 0) await em.getRepository(ApiKey).update({ id }, changes);
      return this.present(await this.rowOf(em, id));
    });
  }

  /** Console revocation of any key of the organization. Revoking twice is harmless. */
  async revoke(principal: ConsolePrincipal, id: string): Promise<KeyMetadata> {
    return this.dataSource.transaction(async (em) => {
      await this.findInOrganization(em, principal, 'key.revoke', id);
      await this.revokeWhere(em, 'id = $1', [id]);
      return this.present(await this.rowOf(em, id));
    });
  }

  async self(principal: KeyPrincipal): Promise<KeyMetadata> {
    return this.present(this.verified.get(principal) ?? (await this.rowOf(this.dataSource.manager, principal.id)));
  }

  /** Permanent. The very next request with this key gets 401. */
  async revokeSelf(principal: KeyPrincipal): Promise<KeyMetadata> {
    return this.dataSource.transaction(async (em) => {
      await this.revokeWhere(em, 'id = $1', [principal.id]);
      return this.present(await this.rowOf(em, principal.id));
    });
  }

  /** Used when an identity is deleted: every key bound to it stops working. */
  async revokeAllForIdentity(em: EntityManager, identityId: string): Promise<void> {
    await this.revokeWhere(em, 'identity_id = $1', [identityId]);
  }

  /** Revokes the active keys matching `condition`, each with its `api_key.revoked` event. */
  private async revokeWhere(em: EntityManager, condition: string, params: unknown[]): Promise<void> {
    const [revoked] = (await em.query(
      `UPDATE api_keys SET status = 'revoked', revoked_at = now() WHERE ${condition} AND status = 'active' RETURNING id`, params,
    )) as [Array<{ id: string }>, number];
    if (revoked.length === 0) return;
    const rows = (await em.query(`${SELECT_METADATA} WHERE k.id = ANY($1::uuid[])`, [revoked.map((r) => r.id)])) as KeyRow[];
    for (const row of rows) {
      const metadata = this.present(row);
      await this.events.emit(em, { type: 'api_key.revoked', organizationId: metadata.organization_id, data: { api_key: metadata } });
    }
  }

  /** The identity an admin key or Console user may bind a new agent key to. */
  private async lockBindableIdentity(em: EntityManager, principal: Principal, identityId: string): Promise<void> {
    const [identity] = (await em.query(
      `SELECT id, organization_id FROM identities WHERE id = $1 AND status = 'active' FOR UPDATE`,
      [identityId],
    )) as Array<{ id: string; organization_id: string | null }>;
    requireAccess(principal, 'key.bind', identity ? { owner: { organizationId: identity.organization_id, identityId: identity.id } } : null);
  }

  /** The key, if `principal` may do `permission` to it (its organization's keys). */
  private async findInOrganization(em: EntityManager, principal: Principal, permission: Permission, id: string): Promise<KeyRow> {
    const row = await this.rowOf(em, id);
    requireAccess(principal, permission, row ? { owner: { organizationId: row.organization_id, identityId: row.identity_id } } : null);
    return row;
  }

  private async rowOf(em: EntityManager, id: string): Promise<KeyRow> {
    const [row] = (await em.query(`${SELECT_METADATA} WHERE k.id = $1`, [id])) as KeyRow[];
    return row;
  }

  private present(row: KeyRow): KeyMetadata {
    return toKeyMetadata(row, this.usage.latest(row.id, row.last_used_at));
  }
}
