import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { DataSource, EntityManager, Repository } from 'typeorm';
import { conflict } from '../common/app-error';
import { APP_CONFIG, type AppConfig } from '../config/config';
import type { AdminKeyPrincipal, ConsolePrincipal, Principal } from '../auth/principal';
import { HotQuery } from '../database/hot-query';
import { EventsService } from '../events/events.service';
import { creatorOf, KeysService } from '../keys/keys.service';
import type { CardFieldsDto } from './dto/card-fields.dto';
import type { CreateIdentityDto } from './dto/create-identity.dto';
import type { UpdateSettingsDto } from './dto/update-settings.dto';
import { identityParty, requireAccess, requireSettingsChange, type Permission, type SettingField } from '../auth/access';
import { emitIdentityEvent } from './identity-events';
import {
  identityFromRow, insertIdentity, lockIdentity, SELECT_IDENTITY_BY_HANDLE, SELECT_IDENTITY_BY_ID, SELECT_IDENTITY_BY_ID_OR_HANDLE, SELECT_IDENTITIES_BY_IDS,
  type IdentityRow,
} from './identity-rows';
import { canonicalSkills, toIdentityView, toSettingsView, type IdentityView, type MintedKeyView, type SettingsView } from './identity-view';
import { Identity } from './identity.entity';

const SETTING_COLUMNS = {
  enabled: 'enabled',
  allow_public_egress: 'allowPublicEgress',
  publicly_discoverable: 'publiclyDiscoverable',
  filter_mode: 'filterMode',
} as const satisfies Record<SettingField, keyof Identity>;

/**
 * Identity rows for the rest of the service, and the identity REST surface:
 * create, read, card edit, settings, delete. Other modules (admission, protocol,
 * ledger) look identities up here rather than querying the table themselves.
 * Every per-resource rule goes through src/auth/access.ts.
 */
@Injectable()
export class IdentitiesService {
  private readonly baseUrl: string;

  constructor(
    @InjectRepository(Identity) private readonly identities: Repository<Identity>,
    private readonly dataSource: DataSource,
    private readonly hot: HotQuery,
    private readonly keys: KeysService,
    private readonly events: EventsService,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.baseUrl = config.publicBaseUrl;
  }

  /** Any identity with this handle, whatever its state (handles are never reused). */
  async findByHandle(handle: string): Promise<Identity | null> {
    return identityFromRow((await this.hot.rows<IdentityRow>('identity_by_handle', SELECT_IDENTITY_BY_HANDLE, [handle]))[0]);
  }

  async findById(id: string): Promise<Identity | null> {
    return identityFromRow((await this.hot.rows<IdentityRow>('identity_by_id', SELECT_IDENTITY_BY_ID, [id]))[0]);
  }

  /**
   * The parties of a protocol call, read together (one round trip on the hottest
   * path): the caller by id, and the worker by handle if it is servable (else null).
   */
  async findCallParties(requesterId: string, workerHandle: string): Promise<{ requester: Identity | null; worker: Identity | null }> {
    const rows = (await this.hot.rows<IdentityRow>('identity_call_parties', SELECT_IDENTITY_BY_ID_OR_HANDLE, [requesterId, workerHandle]))
      .map((row) => identityFromRow(row)!);
    const worker = rows.find((identity) => identity.agentHandle === workerHandle) ?? null;
    return { requester: rows.find((identity) => identity.id === requesterId) ?? null, worker: worker && isServable(worker) ? worker : null };
  }

  /** Several identities in one query (to show the handles a page of rows names). */
  async findByIds(ids: readonly string[]): Promise<Identity[]> {
    if (ids.length === 0) return [];
    const rows = await this.hot.rows<IdentityRow>('identities_by_ids', SELECT_IDENTITIES_BY_IDS, [[...new Set(ids)]]);
    return rows.map((row) => identityFromRow(row)!);
  }

  /**
   * The identity that may be served at /a2a/{handle} (card and protocol): claimed,
   * receiver enabled and not deleted; otherwise null (→ 404). Read on every call,
   * never cached, so disabling takes effect on the very next request.
   */
  async findServable(handle: string): Promise<Identity | null> {
    const identity = await this.findByHandle(handle);
    return identity && isServable(identity) ? identity : null;
  }

  /** `POST /api/v1/identities`: claimed into the caller's organization, receiver disabled. */
  async create(principal: AdminKeyPrincipal | ConsolePrincipal, dto: CreateIdentityDto): Promise<IdentityView & { api_key?: MintedKeyView }> {
    return this.dataSource.transaction(async (em) => {
      const identity = await insertIdentity(em, {
        handle: dto.agent_handle,
        organizationId: principal.organizationId,
        card: dto,
        settings: { publiclyDiscoverable: dto.publicly_discoverable, allowPublicEgress: dto.allow_public_egress, filterMode: dto.filter_mode },
      });
      // Created claimed: for its organization it is an identity that has just been claimed into it.
      const view = await this.emitted(em, 'identity.claimed', identity);
      if (!dto.mint_key) return view;
      const { metadata, key } = await this.keys.mintWith(em, {
        scope: 'agent',
        identityId: identity.id,
        createdBy: creatorOf(principal),
      });
      return { ...view, api_key: { ...metadata, key } };
    });
  }

  async get(principal: Principal, handle: string): Promise<IdentityView> {
    return toIdentityView(await this.visible(principal, handle, 'identity.read'), this.baseUrl);
  }

  /** Card copy: `display_name`, `description`, `skills`. A real change bumps card_version. */
  async updateCard(principal: Principal, handle: string, dto: CardFieldsDto): Promise<IdentityView> {
    return this.dataSource.transaction(async (em) => {
      const identity = await this.lockForChange(em, principal, handle, 'identity.editCard');
      const next = {
        displayName: dto.display_name ?? identity.displayName,
        description: dto.description ?? identity.description,
        skills: canonicalSkills(dto.skills ?? identity.skills),
      };
      const changed = next.displayName !== identity.displayName || next.description !== identity.description ||
        JSON.stringify(next.skills) !== JSON.stringify(canonicalSkills(identity.skills));
      if (!changed) return toIdentityView(identity, this.baseUrl);
      await em.getRepository(Identity).update({ id: identity.id }, { ...next, cardVersion: () => 'card_version + 1' });
      return this.emitted(em, 'identity.updated', await em.getRepository(Identity).findOneByOrFail({ id: identity.id }));
    });
  }

  async getSettings(principal: Principal, handle: string): Promise<SettingsView> {
    return toSettingsView(await this.visible(principal, handle, 'identity.readSettings'));
  }

  /**
   * Per field, the table of CONTRACT §3. Enabling serves the card and the protocol
   * endpoint from the next request on; disabling makes both 404 just as fast.
   */
  async updateSettings(principal: Principal, handle: string, dto: UpdateSettingsDto): Promise<SettingsView> {
    return this.dataSource.transaction(async (em) => {
      const identity = await this.lockForChange(em, principal, handle, 'identity.changeSettings');
      const fields = (Object.keys(dto) as SettingField[]).filter((field) => dto[field] !== undefined);
      requireSettingsChange(principal, identity, fields, dto.enabled === true);
      if (fields.length > 0) {
        await em.getRepository(Identity).update({ id: identity.id }, Object.fromEntries(fields.map((field) => [SETTING_COLUMNS[field], dto[field]])));
      }
      const updated = await em.getRepository(Identity).findOneByOrFail({ id: identity.id });
      if (fields.some((field) => updated[SETTING_COLUMNS[field]] !== identity[SETTING_COLUMNS[field]])) {
        await this.emitted(em, 'identity.updated', updated);
      }
      return toSettingsView(updated);
    });
  }

  /**
   * Soft delete: the row stays (its handle reserved forever, its ledger intact),
   * its receiver is disabled, its keys are revoked in the same transaction.
   */
  async remove(principal: AdminKeyPrincipal | ConsolePrincipal, handle: string): Promise<void> {
    await this.dataSource.transaction(async (em) => {
      const identity = await this.lockForChange(em, principal, handle, 'identity.delete');
      await em.getRepository(Identity).update({ id: identity.id }, { status: 'deleted', deletedAt: () => 'now()', enabled: false });
      await this.emitted(em, 'identity.updated', await em.getRepository(Identity).findOneByOrFail({ id: identity.id }));
      await this.keys.revokeAllForIdentity(em, identity.id);
    });
  }

  /** The identity as every read shows it, reported to its organization in the change's transaction. */
  private async emitted(em: EntityManager, type: 'identity.claimed' | 'identity.updated', identity: Identity): Promise<IdentityView> {
    return emitIdentityEvent(this.events, em, type, toIdentityView(identity, this.baseUrl));
  }

  private async visible(principal: Principal, handle: string, permission: Extract<Permission, `identity.${string}`>): Promise<Identity> {
    const identity = await this.findByHandle(handle);
    requireAccess(principal, permission, identityParty(identity), handle);
    return identity!;
  }

  /** The identity, locked, after the access check; a deleted identity can no longer change. */
  private async lockForChange(em: EntityManager, principal: Principal, handle: string, permission: Extract<Permission, `identity.${string}`>): Promise<Identity> {
    const identity = await lockIdentity(em, handle);
    requireAccess(principal, permission, identityParty(identity), handle);
    if (identity!.status === 'deleted') throw conflict('identity_deleted', 'The identity has been deleted; it can be read but no longer changed.');
    return identity!;
  }
}

/** Served at /a2a/{handle} (card and protocol): claimed, receiver enabled, not deleted. */
function isServable(identity: Identity): boolean {
  return identity.claimed && identity.enabled && identity.status === 'active';
}
