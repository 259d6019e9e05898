import { Inject, Injectable } from '@nestjs/common';
import { badRequest, conflict, forbidden, type AppError } from '../common/app-error';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { isUuid } from '../common/parse-id.pipe';
import { requireAccess, requireGrant, type Permission } from '../auth/access';
import { Database, type Tx } from '../database/database';
import type { AdminKeyPrincipal, ConsolePrincipal, KeyPrincipal, Principal } from '../common/principal';
import { AuditService } from '../audit/audit.service';
import { EventsService } from '../events/events.service';
import { BindableIdentities, KeyLifetimeLimits } from './key-ports';
import type { KeyCreatorType } from './api-key.entity';
import { DISPLAY_PREFIX_LENGTH, generateApiKey, hashApiKey, parseApiKey, type KeyScope } from './key-format';
import { toKeyMetadata, type KeyMetadata } from './key-metadata';
import { KeyLookup } from './key-lookup';
import { expiredKey, keyLifetime, lostKey } from './key-standing';
import { KeyUsageTracker } from './key-usage.tracker';
import { KeysRepository, type KeyRecord, type KeySelection, type VerifiedKey } from './keys.repository';
import type { MintKeyDto } from './dto/mint-key.dto';
import type { UpdateKeyDto } from './dto/update-key.dto';
import type { ListKeysQuery } from './dto/list-keys.query';

/** docs/api.md §10: at most this many active keys per identity. */
export const MAX_ACTIVE_KEYS_PER_IDENTITY = 20;

export interface KeyBinding {
  scope: KeyScope;
  /** Admin keys: the organization. */
  organizationId?: string;
  /** Agent keys: the identity. */
  identityId?: string;
  label?: string;
  description?: string;
  createdBy: { type: KeyCreatorType; id: string | null };
  /** When it expires (docs/api.md §2: in the future, within the organization's maximum). */
  expiresAt?: Date;
  /**
   * The organization whose `max_key_lifetime_days` applies: an agent key's identity's
   * (an admin key's is `organizationId`). None: the key has no maximum (an unclaimed identity's).
   */
  limitedBy?: string | null;
}

/** Who a key minted on a principal's request was created by. */
export function creatorOf(principal: AdminKeyPrincipal | ConsolePrincipal): KeyBinding['createdBy'] {
  return principal.kind === 'console'
    ? { type: 'console_user', id: principal.id }
    : { type: 'api_key', id: principal.id };
}

/** A trusted issuer's token (docs/api.md §17) acts as an agent but is no key: there is no key to read or revoke. */
function notAKey(principal: KeyPrincipal): void {
  if (principal.kind === 'agent' && principal.federated) {
    throw forbidden('not_an_api_key', "A trusted issuer's token is not an API key: it has no key to read or revoke.");
  }
}

/** A key as the audit log names it: its id and label. */
function keyTarget(metadata: KeyMetadata): { type: string; id: string; label: string } {
  return { type: 'api_key', id: metadata.id, label: metadata.label };
}

export interface MintedKey {
  metadata: KeyMetadata;
  /** The plaintext, returned once and never again. */
  key: string;
}

@Injectable()
export class KeysService {
  private readonly verified = new WeakMap<KeyPrincipal, KeyRecord>();

  constructor(
    private readonly db: Database,
    private readonly repository: KeysRepository,
    private readonly lookup: KeyLookup,
    private readonly identities: BindableIdentities,
    private readonly limits: KeyLifetimeLimits,
    private readonly usage: KeyUsageTracker,
    private readonly events: EventsService,
    private readonly audit: AuditService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * The principal behind a plaintext key, or null when the key is malformed,
   * unknown or revoked; an expired key throws its own 401 (`api_key_expired`). A
   * malformed key never reaches the database; a well-formed one is read for this
   * request (KeyLookup batches concurrent reads, never caches), and its expiry is
   * decided by that same read.
   */
  async verify(raw: string, arriving = false): Promise<KeyPrincipal | null> {
    if (!parseApiKey(raw)) {
      return null;
    }
    const checkedAt = performance.now();
    return this.principalOf(await this.lookup.find(hashApiKey(raw), arriving), checkedAt);
  }

  /**
   * The principal of the key `id` as it stands now, for an access token that names it
   * (docs/api.md §17): read exactly as `verify` reads a key, in the same batched,
   * uncached lookup, so a revoked or expired key ends its tokens on the next request.
   */
  async verifyId(id: string, arriving = false): Promise<KeyPrincipal | null> {
    if (!isUuid(id)) {
      return null;
    }
    const checkedAt = performance.now();
    return this.principalOf(await this.lookup.findById(id, arriving), checkedAt);
  }

  private principalOf(key: VerifiedKey | null, checkedAt: number): KeyPrincipal | null {
    if (!key || key.standing === 'revoked') {
      return null;
    }
    if (key.standing === 'expired') {
      throw expiredKey(key.expiresAt);
    }
    const principal: KeyPrincipal =
      key.scope === 'admin'
        ? { kind: 'admin', id: key.id, label: key.label, organizationId: key.organizationId! }
        : {
            kind: 'agent',
            id: key.id,
            label: key.label,
            organizationId: key.organizationId,
            identity: {
              id: key.identityId!,
              handle: key.identityHandle!,
              claimed: key.identityClaimed === true,
              enabled: key.identityEnabled === true,
            },
            checkedAt,
            admissionVersion: key.admissionVersion,
            expiresAt: key.expiresAt,
          };
    // Authentication already read the key's metadata; GET /api-keys/self reuses it
    // for this request instead of a second round trip.
    this.verified.set(principal, key);
    return principal;
  }

  /** Notes the key's use by an authenticated request (KeyUsageTracker: `last_used_at`). */
  used(principal: KeyPrincipal): void {
    this.usage.touch(principal.id);
  }

  /**
   * The 401 a key authenticated earlier gets now, revoked or expired; null while it is
   * active. Protocol streams and blocking sends ask when they wake, unless vouched for
   * (CallStanding), and event streams as they wake, so a revocation or an expiry ends
   * them too (one primary-key probe).
   */
  async lostStanding(keyId: string): Promise<AppError | null> {
    return lostKey(await this.repository.standing(keyId));
  }

  /** `POST /api/v1/api-keys`: who may mint what, as docs/api.md §2's table of operations says. */
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
    return this.db.transaction(async (tx) => {
      const limitedBy =
        scope === 'agent' ? await this.lockBindableIdentity(tx, principal, dto.scoped_identity_id!) : undefined;
      return this.mintWith(tx, {
        scope,
        organizationId: scope === 'admin' ? minter.organizationId : undefined,
        identityId: scope === 'agent' ? dto.scoped_identity_id : undefined,
        label: dto.label,
        description: dto.description,
        createdBy,
        expiresAt: dto.expires_at === undefined ? undefined : new Date(dto.expires_at),
        limitedBy,
      });
    });
  }

  /**
   * Mints inside a caller's transaction (identity creation with `mint_key`, agent
   * signup, bootstrap). The caller has already decided the binding is allowed.
   */
  async mintWith(tx: Tx, binding: KeyBinding): Promise<MintedKey> {
    if (binding.identityId) {
      const count = await this.repository.countActiveForIdentity(binding.identityId, tx);
      if (count >= MAX_ACTIVE_KEYS_PER_IDENTITY) {
        throw conflict(
          'key_limit_reached',
          `An identity can have at most ${MAX_ACTIVE_KEYS_PER_IDENTITY} active keys; revoke one first.`,
        );
      }
    }
    const lifetime = keyLifetime(binding.expiresAt, await this.maxLifetimeDays(tx, binding));
    const key = generateApiKey(binding.scope);
    const id = await this.repository.insert(
      {
        keyHash: hashApiKey(key),
        prefix: key.slice(0, DISPLAY_PREFIX_LENGTH),
        scope: binding.scope,
        organizationId: binding.organizationId ?? null,
        identityId: binding.identityId ?? null,
        label: binding.label ?? '',
        description: binding.description ?? '',
        createdByType: binding.createdBy.type,
        createdById: binding.createdBy.id,
        expiresAt: lifetime.expiresAt,
        lifetimeDays: lifetime.defaultDays,
      },
      tx,
    );
    const metadata = this.present(await this.keyOf(tx, id));
    await this.events.emit(tx, {
      type: 'api_key.created',
      organizationId: metadata.organization_id,
      data: { api_key: metadata },
    });
    await this.audit.record(tx, {
      organizationId: metadata.organization_id,
      actor: binding.createdBy.type === 'signup' ? 'signup' : undefined,
      action: 'api_key.minted',
      target: keyTarget(metadata),
      after: metadata,
    });
    return { metadata, key };
  }

  /** The organization's cap on the new key's lifetime in days, if it sets one. */
  private async maxLifetimeDays(tx: Tx, binding: KeyBinding): Promise<number | null> {
    const organizationId = binding.scope === 'admin' ? binding.organizationId : binding.limitedBy;
    return organizationId ? ((await this.limits.organization(organizationId, tx))?.maxKeyLifetimeDays ?? null) : null;
  }

  /**
   * One batch of the `api_key.expiring` notices (docs/api.md §8): active keys that expire
   * within API_KEY_EXPIRY_NOTICE_DAYS and have had none, each marked and its event
   * written in one transaction, so a key gets one notice however many passes run. The
   * retention pass runs it (where a dispatcher runs); how many keys it noticed.
   */
  async noticeExpiring(batch: number): Promise<number> {
    return this.db.transaction(async (tx) => {
      const expiring = await this.repository.markExpiring(this.config.retention.keyExpiryNoticeDays, batch, tx);
      for (const key of expiring) {
        const metadata = this.present(key);
        await this.events.emit(tx, {
          type: 'api_key.expiring',
          organizationId: metadata.organization_id,
          data: { api_key: metadata },
        });
      }
      return expiring.length;
    });
  }

  async list(
    principal: KeyPrincipal | ConsolePrincipal,
    query: ListKeysQuery,
  ): Promise<{ api_keys: KeyMetadata[]; next_cursor: string | null }> {
    const page = await this.repository.list(principal.organizationId, {
      limit: query.limit,
      cursor: query.cursor,
      scope: query.scope,
      status: query.status,
      identity: query.identity,
      expiringWithinDays: query.expiring_within_days,
    });
    return { api_keys: page.items.map((key) => this.present(key)), next_cursor: page.nextCursor };
  }

  async get(principal: KeyPrincipal | ConsolePrincipal, id: string): Promise<KeyMetadata> {
    return this.present(await this.findInOrganization(principal, 'key.read', id));
  }

  /** Console only (enforced by the route's surface): label and description. */
  async update(principal: ConsolePrincipal, id: string, dto: UpdateKeyDto): Promise<KeyMetadata> {
    return this.db.transaction(async (tx) => {
      const before = this.present(await this.findInOrganization(principal, 'key.edit', id, tx));
      await this.repository.update(id, { label: dto.label, description: dto.description }, tx);
      const after = this.present(await this.keyOf(tx, id));
      await this.audit.record(tx, {
        organizationId: after.organization_id,
        action: 'api_key.updated',
        target: keyTarget(after),
        before,
        after,
      });
      return after;
    });
  }

  /** Console revocation of any key of the organization. Revoking twice is harmless. */
  async revoke(principal: ConsolePrincipal, id: string): Promise<KeyMetadata> {
    return this.db.transaction(async (tx) => {
      await this.findInOrganization(principal, 'key.revoke', id, tx);
      const [revoked] = await this.revokeWhere({ id }, tx);
      return revoked ?? this.present(await this.keyOf(tx, id));
    });
  }

  async self(principal: KeyPrincipal): Promise<KeyMetadata> {
    notAKey(principal);
    return this.present(this.verified.get(principal) ?? (await this.keyOf(undefined, principal.id)));
  }

  /** Permanent. The very next request with this key gets 401. */
  async revokeSelf(principal: KeyPrincipal): Promise<KeyMetadata> {
    notAKey(principal);
    return this.db.transaction(async (tx) => {
      const [revoked] = await this.revokeWhere({ id: principal.id }, tx);
      return revoked ?? this.present(await this.keyOf(tx, principal.id));
    });
  }

  /** Used when an identity is deleted: every key bound to it stops working. */
  async revokeAllForIdentity(tx: Tx, identityId: string): Promise<void> {
    await this.revokeWhere({ identityId }, tx);
  }

  /**
   * Revokes the selected active keys, each with its `api_key.revoked` event; their
   * metadata as revoked (none when no key was active: an already revoked key is read
   * by the caller).
   */
  private async revokeWhere(selection: KeySelection, tx: Tx): Promise<KeyMetadata[]> {
    const revoked = (await this.repository.revoke(selection, tx)).map((key) => this.present(key));
    for (const metadata of revoked) {
      await this.events.emit(tx, {
        type: 'api_key.revoked',
        organizationId: metadata.organization_id,
        data: { api_key: metadata },
      });
      await this.audit.record(tx, {
        organizationId: metadata.organization_id,
        action: 'api_key.revoked',
        target: keyTarget(metadata),
        before: { status: 'active' },
        after: { status: metadata.status },
      });
    }
    return revoked;
  }

  /** The identity an admin key or Console user may bind a new agent key to; its organization. */
  private async lockBindableIdentity(tx: Tx, principal: Principal, identityId: string): Promise<string | null> {
    const identity = await this.identities.lockBindable(identityId, tx);
    requireAccess(
      principal,
      'key.bind',
      identity ? { owner: { organizationId: identity.organizationId, identityId: identity.id } } : null,
    );
    return identity!.organizationId;
  }

  /** The key, if `principal` may do `permission` to it (its organization's keys). */
  private async findInOrganization(
    principal: Principal,
    permission: Permission,
    id: string,
    tx?: Tx,
  ): Promise<KeyRecord> {
    const key = await this.repository.findById(id, tx);
    requireAccess(
      principal,
      permission,
      key ? { owner: { organizationId: key.organizationId, identityId: key.identityId } } : null,
    );
    return key!;
  }

  private async keyOf(tx: Tx | undefined, id: string): Promise<KeyRecord> {
    return (await this.repository.findById(id, tx))!;
  }

  private present(key: KeyRecord): KeyMetadata {
    return toKeyMetadata(key, this.usage.latest(key.id, key.lastUsedAt));
  }
}
