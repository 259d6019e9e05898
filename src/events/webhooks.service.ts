import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { badRequest, conflict, notFound } from '../common/app-error';
import { eventScope, requireAccess, type Permission } from '../auth/access';
import type { ConsolePrincipal, KeyPrincipal } from '../common/principal';
import { AuditService } from '../audit/audit.service';
import { Database, type Tx } from '../database/database';
import { OrganizationLocks, WebhookIdentities } from './event-ports';
import { checkDestinationUrl } from './address-policy';
import { DeliveryDispatcher } from './delivery-dispatcher';
import { DeliveryQueue } from './delivery-queue';
import { ALL_EVENTS, ORGANIZATION_ONLY_TYPES, type EventType } from './event-types';
import { DeliveriesRepository } from './deliveries.repository';
import { WebhooksRepository, type WebhookChanges, type WebhookScope } from './webhooks.repository';
import { EventsService } from './events.service';
import { generateSecret } from './signing';
import type { WebhookRecord } from './webhook-records';
import { toDeliveryView, toWebhookView, type DeliveryView, type WebhookView } from './webhook.view';
import type { CreateWebhookDto } from './dto/create-webhook.dto';
import type { UpdateWebhookDto } from './dto/update-webhook.dto';
import type { ListWebhooksQuery } from './dto/list-webhooks.query';
import type { ListDeliveriesQuery } from './dto/list-deliveries.query';

/** At most this many webhooks per organization (docs/api.md §10). */
export const MAX_WEBHOOKS_PER_ORGANIZATION = 50;
/** After a rotation the previous secret also signs for this long, so receivers can switch without missing a delivery. */
export const ROTATION_OVERLAP_MS = 24 * 3600 * 1000;
type Caller = KeyPrincipal | ConsolePrincipal;

/** What a caller may see: its organization's webhooks, or for an agent key only its own identity's. */
type Scope = WebhookScope;

function scopeOf(principal: Caller): Scope {
  return eventScope(principal);
}

/**
 * Webhook subscriptions (docs/api.md §8). Admin keys and Console users manage their
 * organization's webhooks, organization-wide or for one of its identities; a claimed
 * agent key manages only webhooks for its own identity and never sees others (404).
 */
@Injectable()
export class WebhooksService {
  constructor(
    private readonly db: Database,
    private readonly repository: WebhooksRepository,
    private readonly deliveryRows: DeliveriesRepository,
    private readonly organizations: OrganizationLocks,
    private readonly identities: WebhookIdentities,
    private readonly events: EventsService,
    private readonly queue: DeliveryQueue,
    private readonly dispatcher: DeliveryDispatcher,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly audit: AuditService,
  ) {}

  async create(principal: Caller, dto: CreateWebhookDto): Promise<WebhookView & { secret: string }> {
    const scope = scopeOf(principal);
    checkDestinationUrl(dto.url, this.config.webhooksAllowPrivateNetworks);
    const secret = generateSecret();
    const id = await this.db.transaction(async (tx) => {
      const identityId = await this.subscriptionIdentity(tx, principal, dto.identity);
      const events = normalizeEvents(dto.events, identityId);
      // Serializes concurrent creations in one organization, so the limit holds.
      await this.organizations.lockOrganization(scope.organizationId, tx);
      if ((await this.repository.countWebhooks(scope.organizationId, tx)) >= MAX_WEBHOOKS_PER_ORGANIZATION) {
        throw conflict(
          'webhook_limit_reached',
          `An organization can have at most ${MAX_WEBHOOKS_PER_ORGANIZATION} webhooks; delete one first.`,
        );
      }
      const inserted = await this.repository.insertWebhook(
        {
          organizationId: scope.organizationId,
          identityId,
          url: dto.url,
          events,
          description: dto.description ?? '',
          secret,
        },
        tx,
      );
      await this.audit.record(tx, {
        organizationId: scope.organizationId,
        action: 'webhook.created',
        target: { type: 'webhook', id: inserted, label: dto.url },
        after: {
          identity: dto.identity ?? null,
          url: dto.url,
          events,
          description: dto.description ?? '',
          status: 'active',
        },
      });
      return inserted;
    });
    return { ...(await this.get(principal, id)), secret };
  }

  async list(
    principal: Caller,
    query: ListWebhooksQuery,
  ): Promise<{ webhooks: WebhookView[]; next_cursor: string | null }> {
    const page = await this.repository.listWebhooks(
      scopeOf(principal),
      { status: query.status, identity: query.identity },
      query,
    );
    return { webhooks: page.items.map(toWebhookView), next_cursor: page.nextCursor };
  }

  async get(principal: Caller, id: string): Promise<WebhookView> {
    return toWebhookView(await this.find(null, principal, 'webhook.read', id));
  }

  async update(principal: Caller, id: string, dto: UpdateWebhookDto): Promise<WebhookView> {
    if (dto.url !== undefined) {
      checkDestinationUrl(dto.url, this.config.webhooksAllowPrivateNetworks);
    }
    await this.db.transaction(async (tx) => {
      const webhook = await this.find(tx, principal, 'webhook.write', id);
      const changes: WebhookChanges = {};
      if (dto.url !== undefined) {
        changes.url = dto.url;
      }
      if (dto.events !== undefined) {
        changes.events = normalizeEvents(dto.events, webhook.identityId);
      }
      if (dto.description !== undefined) {
        changes.description = dto.description;
      }
      if (dto.status !== undefined && dto.status !== webhook.status) {
        changes.status = dto.status;
        // Enabled again: a fresh start; disabled: nothing more is sent.
        if (dto.status === 'active') {
          changes.failingSince = null;
        } else {
          await this.queue.failPending(tx, id);
        }
      }
      if (Object.keys(changes).length > 0) {
        await this.repository.updateWebhook(id, changes, tx);
        const before = toWebhookView(webhook);
        await this.audit.record(tx, {
          organizationId: webhook.organizationId,
          action: 'webhook.updated',
          target: { type: 'webhook', id, label: changes.url ?? webhook.url },
          before,
          after: { ...before, ...changes },
        });
      }
    });
    return this.get(principal, id);
  }

  /** Its deliveries and their log go with it. */
  async remove(principal: Caller, id: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      const webhook = await this.find(tx, principal, 'webhook.write', id);
      await this.repository.deleteWebhook(id, tx);
      await this.audit.record(tx, {
        organizationId: webhook.organizationId,
        action: 'webhook.deleted',
        target: { type: 'webhook', id, label: webhook.url },
        before: toWebhookView(webhook),
      });
    });
  }

  /** A new secret, shown once; the previous one keeps signing for 24 hours (both signatures are sent). */
  async rotateSecret(principal: Caller, id: string): Promise<WebhookView & { secret: string }> {
    const secret = generateSecret();
    await this.db.transaction(async (tx) => {
      const webhook = await this.find(tx, principal, 'webhook.write', id);
      await this.repository.rotateWebhookSecret(id, ROTATION_OVERLAP_MS, secret, tx);
      // That it rotated, never the secret.
      await this.audit.record(tx, {
        organizationId: webhook.organizationId,
        action: 'webhook.secret_rotated',
        target: { type: 'webhook', id, label: webhook.url },
      });
    });
    return { ...(await this.get(principal, id)), secret };
  }

  /** Sends a `ping` event to this webhook only, whatever its filter. */
  async test(principal: Caller, id: string): Promise<DeliveryView> {
    const eventId = await this.db.transaction(async (tx) => {
      const webhook = await this.find(tx, principal, 'webhook.write', id);
      if (webhook.status !== 'active') {
        throw conflict('webhook_disabled', 'The webhook is disabled; enable it before testing.');
      }
      return this.events.emitToWebhook(tx, id, {
        type: 'ping',
        organizationId: webhook.organizationId,
        identityIds: webhook.identityId ? [webhook.identityId] : [],
        data: { webhook_id: id, message: 'A test event, sent on request.' },
      });
    });
    return toDeliveryView((await this.deliveryRows.deliveryOfEvent(id, eventId))!);
  }

  async deliveries(
    principal: Caller,
    id: string,
    query: ListDeliveriesQuery,
  ): Promise<{ deliveries: DeliveryView[]; next_cursor: string | null }> {
    await this.find(null, principal, 'delivery.read', id);
    const page = await this.deliveryRows.listDeliveries(id, query.status, query);
    return { deliveries: page.items.map(toDeliveryView), next_cursor: page.nextCursor };
  }

  /**
   * Attempts a delivery again now, whatever its status (a succeeded one is sent
   * again with the same `webhook-id`, which receivers use to deduplicate). It
   * counts as one more attempt: if it fails, the retry schedule continues from it.
   */
  async retry(principal: Caller, webhookId: string, deliveryId: string): Promise<DeliveryView> {
    await this.db.transaction(async (tx) => {
      const webhook = await this.find(tx, principal, 'webhook.write', webhookId);
      if (webhook.status !== 'active') {
        throw conflict('webhook_disabled', 'The webhook is disabled; enable it before retrying a delivery.');
      }
      if (await this.deliveryRows.requeueDelivery(deliveryId, webhookId, tx)) {
        return;
      }
      const inFlight = await this.deliveryRows.deliveryInFlight(deliveryId, webhookId, tx);
      if (inFlight === null) {
        throw notFound('delivery_not_found', 'No delivery with that id for this webhook.');
      }
      throw conflict('delivery_in_flight', 'The delivery is being attempted right now.');
    });
    this.dispatcher.wake();
    return toDeliveryView((await this.deliveryRows.delivery(deliveryId))!);
  }

  /** The identity a new subscription is scoped to: an agent key's own; for others the one named, if any. */
  private async subscriptionIdentity(tx: Tx, principal: Caller, named: string | undefined): Promise<string | null> {
    if (named === undefined) {
      return principal.kind === 'agent' ? principal.identity.id : null;
    }
    const identity = await this.identities.findActiveByIdOrHandle(named, tx);
    requireAccess(
      principal,
      'webhook.subscribe',
      identity ? { owner: { organizationId: identity.organizationId, identityId: identity.id } } : null,
    );
    return identity!.id;
  }

  /** The webhook, if `principal` may do `permission` to it; inside a transaction (`tx`), locked for the rest of it. */
  private async find(tx: Tx | null, principal: Caller, permission: Permission, id: string): Promise<WebhookRecord> {
    const webhook = await this.repository.findWebhook(id, tx !== null, tx ?? undefined);
    requireAccess(
      principal,
      permission,
      webhook ? { owner: { organizationId: webhook.organizationId, identityId: webhook.identityId } } : null,
    );
    return webhook!;
  }
}

/**
 * `["*"]` stays as it is, a list loses its repeats. A webhook scoped to one identity
 * cannot ask for organization-only types: it would never receive them.
 */
function normalizeEvents(events: string[], identityId: string | null): string[] {
  if (events.includes(ALL_EVENTS)) {
    return [ALL_EVENTS];
  }
  const unique = [...new Set(events)];
  const organizationOnly = unique.filter((type) => ORGANIZATION_ONLY_TYPES.includes(type as EventType));
  if (identityId !== null && organizationOnly.length > 0) {
    const detail = `${organizationOnly.join(', ')} ${organizationOnly.length > 1 ? 'are' : 'is'} only sent to organization-wide webhooks.`;
    throw badRequest('validation_failed', detail, [{ field: 'events', message: detail }]);
  }
  return unique;
}
