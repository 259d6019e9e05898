import { Inject, Injectable } from '@nestjs/common';
import { badRequest, conflict } from '../common/app-error';
import { APP_CONFIG, type AppConfig } from '../config/config';
import type { AdminKeyPrincipal, ConsolePrincipal, Principal } from '../common/principal';
import { Database, type Tx } from '../database/database';
import { AuditService } from '../audit/audit.service';
import { EventsService } from '../events/events.service';
import { creatorOf, KeysService } from '../keys/keys.service';
import type { CardFieldsDto } from './dto/card-fields.dto';
import type { CreateIdentityDto } from './dto/create-identity.dto';
import type { UpdateSettingsDto } from './dto/update-settings.dto';
import {
  identityParty,
  requireAccess,
  requireSettingsChange,
  type Permission,
  type SettingField,
} from '../auth/access';
import { emitIdentityEvent } from './identity-events';
import { IdentitiesRepository, type IdentitySettings, type NewIdentity } from './identities.repository';
import {
  canonicalSkills,
  toIdentityView,
  toSettingsView,
  type IdentityView,
  type MintedKeyView,
  type SettingsView,
} from './identity.view';
import type { FilterMode, Identity } from './identity.entity';

const SETTING_PROPERTIES = {
  enabled: 'enabled',
  allow_public_egress: 'allowPublicEgress',
  publicly_discoverable: 'publiclyDiscoverable',
  filter_mode: 'filterMode',
  require_skill: 'requireSkill',
  daily_task_quota: 'dailyTaskQuota',
  // Two columns; settingChanges sets both.
  monthly_cost_budget: 'monthlyCostBudgetAmount',
} as const satisfies Record<SettingField, keyof Identity & keyof IdentitySettings>;

/** A settings PATCH as the repository's changes (the monthly budget is two columns). */
function settingChanges(dto: UpdateSettingsDto, fields: readonly SettingField[]): IdentitySettings {
  const changes: IdentitySettings = {};
  for (const field of fields) {
    if (field === 'monthly_cost_budget') {
      changes.monthlyCostBudgetAmount = dto.monthly_cost_budget?.amount ?? null;
      changes.monthlyCostBudgetCurrency = dto.monthly_cost_budget?.currency ?? null;
    } else {
      Object.assign(changes, { [SETTING_PROPERTIES[field]]: dto[field] });
    }
  }
  return changes;
}

/** An identity to create, as the REST body and agent signup give it. */
export interface IdentityToCreate {
  handle: string;
  /** Null for agent signup: the identity stays unclaimed until a Console user claims it. */
  organizationId: string | null;
  card: CardFieldsDto;
  settings?: { publiclyDiscoverable?: boolean; allowPublicEgress?: boolean; filterMode?: FilterMode };
  claim?: NewIdentity['claim'];
}

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
    private readonly identities: IdentitiesRepository,
    private readonly db: Database,
    private readonly keys: KeysService,
    private readonly events: EventsService,
    private readonly audit: AuditService,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.baseUrl = config.publicBaseUrl;
  }

  /** Any identity with this handle, whatever its state (handles are never reused). */
  async findByHandle(handle: string): Promise<Identity | null> {
    return this.identities.findByHandle(handle);
  }

  async findById(id: string): Promise<Identity | null> {
    return this.identities.findById(id);
  }

  /** Several identities in one query (to show the handles a page of rows names). */
  async findByIds(ids: readonly string[]): Promise<Identity[]> {
    return this.identities.findByIds(ids);
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
  async create(
    principal: AdminKeyPrincipal | ConsolePrincipal,
    dto: CreateIdentityDto,
  ): Promise<IdentityView & { api_key?: MintedKeyView }> {
    return this.db.transaction(async (tx) => {
      const identity = await this.insert(tx, {
        handle: dto.agent_handle,
        organizationId: principal.organizationId,
        card: dto,
        settings: {
          publiclyDiscoverable: dto.publicly_discoverable,
          allowPublicEgress: dto.allow_public_egress,
          filterMode: dto.filter_mode,
        },
      });
      // Created claimed: for its organization it is an identity that has just been claimed into it.
      const view = await this.emitted(tx, 'identity.claimed', identity);
      await this.audit.record(tx, {
        organizationId: view.organization_id,
        action: 'identity.created',
        target: identityTarget(view),
        after: view,
      });
      if (!dto.mint_key) {
        return view;
      }
      const { metadata, key } = await this.keys.mintWith(tx, {
        scope: 'agent',
        identityId: identity.id,
        createdBy: creatorOf(principal),
        limitedBy: principal.organizationId,
      });
      return { ...view, api_key: { ...metadata, key } };
    });
  }

  async get(principal: Principal, handle: string): Promise<IdentityView> {
    return toIdentityView(await this.readable(principal, handle), this.baseUrl);
  }

  /** The identity `principal` may read (`identity.read`): for the modules that act on an identity's behalf. */
  async readable(principal: Principal, handle: string): Promise<Identity> {
    return this.visible(principal, handle, 'identity.read');
  }

  /** Card copy: `display_name`, `description`, `skills`. A real change bumps card_version. */
  async updateCard(principal: Principal, handle: string, dto: CardFieldsDto): Promise<IdentityView> {
    return this.db.transaction(async (tx) => {
      const identity = await this.lockForChange(tx, principal, handle, 'identity.editCard');
      const next = {
        displayName: dto.display_name ?? identity.displayName,
        description: dto.description ?? identity.description,
        skills: canonicalSkills(dto.skills ?? identity.skills),
      };
      const changed =
        next.displayName !== identity.displayName ||
        next.description !== identity.description ||
        JSON.stringify(next.skills) !== JSON.stringify(canonicalSkills(identity.skills));
      const before = toIdentityView(identity, this.baseUrl);
      if (!changed) {
        return before;
      }
      const after = await this.emitted(
        tx,
        'identity.updated',
        (await this.identities.updateCard(identity.id, next, tx))!,
      );
      await this.audit.record(tx, {
        organizationId: after.organization_id,
        action: 'identity.updated',
        target: identityTarget(after),
        before,
        after,
      });
      return after;
    });
  }

  async getSettings(principal: Principal, handle: string): Promise<SettingsView> {
    return toSettingsView(await this.visible(principal, handle, 'identity.readSettings'));
  }

  /**
   * Per field, the table of docs/api.md §3. Enabling serves the card and the protocol
   * endpoint from the next request on; disabling makes both 404 just as fast.
   */
  async updateSettings(principal: Principal, handle: string, dto: UpdateSettingsDto): Promise<SettingsView> {
    return this.db.transaction(async (tx) => {
      const identity = await this.lockForChange(tx, principal, handle, 'identity.changeSettings');
      const fields = (Object.keys(dto) as SettingField[]).filter((field) => dto[field] !== undefined);
      requireSettingsChange(principal, identity, fields, dto.enabled === true);
      if (dto.monthly_cost_budget && Number(dto.monthly_cost_budget.amount) <= 0) {
        throw badRequest('validation_failed', 'The monthly cost budget must be more than 0.', [
          { field: 'monthly_cost_budget.amount', message: 'amount must be more than 0' },
        ]);
      }
      const updated = (await this.identities.updateSettings(identity.id, settingChanges(dto, fields), tx))!;
      const [before, after] = [toSettingsView(identity), toSettingsView(updated)];
      if (fields.some((field) => JSON.stringify(before[field]) !== JSON.stringify(after[field]))) {
        const after = await this.emitted(tx, 'identity.updated', updated);
        await this.audit.record(tx, {
          organizationId: after.organization_id,
          action: 'identity.settings_changed',
          target: identityTarget(after),
          before,
          after: toSettingsView(updated),
        });
      }
      return after;
    });
  }

  /**
   * Soft delete: the row stays (its handle reserved forever, its ledger intact),
   * its receiver is disabled, its keys are revoked in the same transaction.
   */
  async remove(principal: AdminKeyPrincipal | ConsolePrincipal, handle: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      const identity = await this.lockForChange(tx, principal, handle, 'identity.delete');
      const before = toIdentityView(identity, this.baseUrl);
      const after = await this.emitted(tx, 'identity.updated', (await this.identities.markDeleted(identity.id, tx))!);
      await this.audit.record(tx, {
        organizationId: before.organization_id,
        action: 'identity.deleted',
        target: identityTarget(before),
        before,
        after,
      });
      await this.keys.revokeAllForIdentity(tx, identity.id);
    });
  }

  /**
   * Inserts an identity (receiver disabled) and returns it. A taken handle — by any
   * identity, deleted and unclaimed ones included, since handles are never reused —
   * is a 409.
   */
  async insert(tx: Tx, identity: IdentityToCreate): Promise<Identity> {
    const inserted = await this.identities.insert(
      {
        handle: identity.handle,
        organizationId: identity.organizationId,
        displayName: identity.card.display_name ?? '',
        description: identity.card.description ?? '',
        skills: canonicalSkills(identity.card.skills ?? []),
        publiclyDiscoverable: identity.settings?.publiclyDiscoverable ?? false,
        allowPublicEgress: identity.settings?.allowPublicEgress ?? false,
        filterMode: identity.settings?.filterMode ?? 'whitelist',
        claim: identity.claim,
      },
      tx,
    );
    if (!inserted) {
      throw conflict(
        'handle_taken',
        `The handle "${identity.handle}" is taken; handles are never reused, even after deletion.`,
      );
    }
    return inserted;
  }

  /** The identity as every read shows it, reported to its organization in the change's transaction. */
  private async emitted(
    tx: Tx,
    type: 'identity.claimed' | 'identity.updated',
    identity: Identity,
  ): Promise<IdentityView> {
    return emitIdentityEvent(this.events, tx, type, toIdentityView(identity, this.baseUrl));
  }

  private async visible(
    principal: Principal,
    handle: string,
    permission: Extract<Permission, `identity.${string}`>,
  ): Promise<Identity> {
    const identity = await this.findByHandle(handle);
    requireAccess(principal, permission, identityParty(identity), handle);
    return identity!;
  }

  /** The identity, locked, after the access check; a deleted identity can no longer change. */
  private async lockForChange(
    tx: Tx,
    principal: Principal,
    handle: string,
    permission: Extract<Permission, `identity.${string}`>,
  ): Promise<Identity> {
    const identity = await this.identities.lockByHandle(handle, tx);
    requireAccess(principal, permission, identityParty(identity), handle);
    if (identity!.status === 'deleted') {
      throw conflict('identity_deleted', 'The identity has been deleted; it can be read but no longer changed.');
    }
    return identity!;
  }
}

/** Served at /a2a/{handle} (card and protocol): claimed, receiver enabled, not deleted. */
export function isServable(identity: Identity): boolean {
  return identity.claimed && identity.enabled && identity.status === 'active';
}

/** An identity as the audit log names it: its id and handle. */
export function identityTarget(view: { id: string; agent_handle: string }): {
  type: string;
  id: string;
  label: string;
} {
  return { type: 'identity', id: view.id, label: view.agent_handle };
}
