import { Inject, Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { badRequest, conflict, notFound } from '../common/app-error';
import { creationPosition, decodeCursor, keysetAfter, pageLimit, pageOf } from '../common/pagination';
import { isUuid } from '../common/parse-id.pipe';
import { eventScope, requireAccess, type Permission } from '../auth/access';
import type { ConsolePrincipal, KeyPrincipal } from '../auth/principal';
import { checkDestinationUrl } from './address-policy';
import { DeliveryDispatcher } from './delivery-dispatcher';
import { DeliveryQueue } from './delivery-queue';
import { ALL_EVENTS, ORGANIZATION_ONLY_TYPES, type EventType } from './event-types';
import { EventsService } from './events.service';
import { generateSecret } from './signing';
import { Webhook } from './webhook.entity';
import { toDeliveryView, toWebhookView, type DeliveryRow, type DeliveryView, type WebhookRow, type WebhookView } from './webhook.view';
import type { CreateWebhookDto } from './dto/create-webhook.dto';
import type { UpdateWebhookDto } from './dto/update-webhook.dto';
import type { ListWebhooksQuery } from './dto/list-webhooks.query';
import type { ListDeliveriesQuery } from './dto/list-deliveries.query';

/** CONTRACT §10: at most this many webhooks per organization. */
export const MAX_WEBHOOKS_PER_ORGANIZATION = 50;
/** CONTRACT §8: after a rotation the old secret keeps signing this long. */
export const ROTATION_OVERLAP_MS = 24 * 3600 * 1000;
/** A delivery shows at most this many of its attempts (the most recent). */
const ATTEMPTS_SHOWN = 20;

/**
 * The handle of a scoped webhook's identity. The events module sits below
 * identities in the module graph (identities emit events), so it reads these two
 * identity columns itself rather than through IdentitiesService.
 */
const SELECT_WEBHOOK = `
  SELECT w.id, w.organization_id, w.identity_id, i.agent_handle AS identity_handle, w.url, w.events, w.description,
         w.status, w.failing_since, w.previous_secret_expires_at, w.created_at, w.updated_at
    FROM webhooks w LEFT JOIN identities i ON i.id = w.identity_id`;

/**
 * A delivery with its most recent attempts, read by one statement so that both come
 * from one snapshot (an attempt is never shown without the outcome it recorded).
 */
const SELECT_DELIVERY = `
  SELECT d.id, d.webhook_id, d.event_id, e.type AS event_type, d.status, d.attempts, d.next_attempt_at, d.last_attempt_at,
         d.last_status_code, d.last_error, d.last_duration_ms, d.created_at, d.updated_at,
         (SELECT COALESCE(json_agg(a ORDER BY a.attempt), '[]'::json)
            FROM (SELECT attempt, succeeded, status_code, error, duration_ms, created_at
                    FROM delivery_attempts WHERE delivery_id = d.id ORDER BY attempt DESC LIMIT ${ATTEMPTS_SHOWN}) a
         ) AS recent_attempts
    FROM deliveries d JOIN events e ON e.id = d.event_id`;

type Caller = KeyPrincipal | ConsolePrincipal;

/** What a caller may see: its organization's webhooks, or for an agent key only its own identity's. */
interface Scope {
  organizationId: string;
  identityId: string | null;
}

function scopeOf(principal: Caller): Scope {
  return eventScope(principal);
}

/**
 * Webhook subscriptions (CONTRACT §8). Admin keys and Console users manage their
 * organization's webhooks, organization-wide or for one of its identities; a claimed
 * agent key manages only webhooks for its own identity and never sees others (404).
 */
@Injectable()
export class WebhooksService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly events: EventsService,
    private readonly queue: DeliveryQueue,
    private readonly dispatcher: DeliveryDispatcher,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async create(principal: Caller, dto: CreateWebhookDto): Promise<WebhookView & { secret: string }> {
    const scope = scopeOf(principal);
    checkDestinationUrl(dto.url, this.config.webhooksAllowPrivateNetworks);
    const secret = generateSecret();
    const id = await this.dataSource.transaction(async (em) => {
      const identityId = await this.subscriptionIdentity(em, principal, dto.identity);
      const events = normalizeEvents(dto.events, identityId);
      // Serializes concurrent creations in one organization, so the limit holds.
      await em.query(`SELECT id FROM organizations WHERE id = $1 FOR UPDATE`, [scope.organizationId]);
      const [{ count }] = (await em.query(
        `SELECT count(*)::int AS count FROM webhooks WHERE organization_id = $1`, [scope.organizationId],
      )) as Array<{ count: number }>;
      if (count >= MAX_WEBHOOKS_PER_ORGANIZATION) {
        throw conflict('webhook_limit_reached', `An organization can have at most ${MAX_WEBHOOKS_PER_ORGANIZATION} webhooks; delete one first.`);
      }
      const inserted = await em.getRepository(Webhook).insert({
        organizationId: scope.organizationId,
        identityId,
        url: dto.url,
        events,
        description: dto.description ?? '',
        secret,
        status: 'active',
      });
      return inserted.identifiers[0].id as string;
    });
    return { ...(await this.get(principal, id)), secret };
  }

  async list(principal: Caller, query: ListWebhooksQuery): Promise<{ webhooks: WebhookView[]; next_cursor: string | null }> {
    const scope = scopeOf(principal);
    const limit = pageLimit(query);
    const cursor = decodeCursor(query.cursor);
    const params: unknown[] = [scope.organizationId];
    const where = ['w.organization_id = $1'];
    if (scope.identityId) where.push(`w.identity_id = $${params.push(scope.identityId)}`);
    if (query.status) where.push(`w.status = $${params.push(query.status)}`);
    if (query.identity) {
      const p = params.push(query.identity);
      where.push(isUuid(query.identity) ? `w.identity_id = $${p}::uuid` : `i.agent_handle = $${p}`);
    }
    where.push(...keysetAfter('w', cursor, params));
    const rows = (await this.dataSource.query(
      `${SELECT_WEBHOOK} WHERE ${where.join(' AND ')} ORDER BY w.created_at DESC, w.id DESC LIMIT ${limit + 1}`,
      params,
    )) as WebhookRow[];
    const page = pageOf(rows, limit, creationPosition);
    return { webhooks: page.items.map(toWebhookView), next_cursor: page.nextCursor };
  }

  async get(principal: Caller, id: string): Promise<WebhookView> {
    return toWebhookView(await this.find(this.dataSource.manager, principal, 'webhook.read', id));
  }

  async update(principal: Caller, id: string, dto: UpdateWebhookDto): Promise<WebhookView> {
    if (dto.url !== undefined) checkDestinationUrl(dto.url, this.config.webhooksAllowPrivateNetworks);
    await this.dataSource.transaction(async (em) => {
      const webhook = await this.find(em, principal, 'webhook.write', id, true);
      const changes: Partial<Webhook> = {};
      if (dto.url !== undefined) changes.url = dto.url;
      if (dto.events !== undefined) changes.events = normalizeEvents(dto.events, webhook.identity_id);
      if (dto.description !== undefined) changes.description = dto.description;
      if (dto.status !== undefined && dto.status !== webhook.status) {
        changes.status = dto.status;
        // Enabled again: a fresh start; disabled: nothing more is sent.
        if (dto.status === 'active') changes.failingSince = null;
        else await this.queue.failPending(em, id);
      }
      if (Object.keys(changes).length > 0) await em.getRepository(Webhook).update({ id }, changes);
    });
    return this.get(principal, id);
  }

  /** Its deliveries and their log go with it. */
  async remove(principal: Caller, id: string): Promise<void> {
    await this.dataSource.transaction(async (em) => {
      await this.find(em, principal, 'webhook.write', id, true);
      await em.query(`DELETE FROM webhooks WHERE id = $1`, [id]);
    });
  }

  /** A new secret, shown once; the previous one keeps signing for 24 hours (both signatures are sent). */
  async rotateSecret(principal: Caller, id: string): Promise<WebhookView & { secret: string }> {
    const secret = generateSecret();
    await this.dataSource.transaction(async (em) => {
      await this.find(em, principal, 'webhook.write', id, true);
      await em.query(
        `UPDATE webhooks
            SET previous_secret = secret, previous_secret_expires_at = now() + $2 * interval '1 millisecond',
                secret = $3, updated_at = now()
          WHERE id = $1`,
        [id, ROTATION_OVERLAP_MS, secret],
      );
    });
    return { ...(await this.get(principal, id)), secret };
  }

  /** Sends a `ping` event to this webhook only, whatever its filter. */
  async test(principal: Caller, id: string): Promise<DeliveryView> {
    const eventId = await this.dataSource.transaction(async (em) => {
      const webhook = await this.find(em, principal, 'webhook.write', id, true);
      if (webhook.status !== 'active') throw conflict('webhook_disabled', 'The webhook is disabled; enable it before testing.');
      return this.events.emitToWebhook(em, id, {
        type: 'ping',
        organizationId: webhook.organization_id,
        identityIds: webhook.identity_id ? [webhook.identity_id] : [],
        data: { webhook_id: id, message: 'A test event, sent on request.' },
      });
    });
    const [row] = (await this.dataSource.query(`${SELECT_DELIVERY} WHERE d.webhook_id = $1 AND d.event_id = $2`, [id, eventId])) as DeliveryRow[];
    return toDeliveryView(row);
  }

  async deliveries(principal: Caller, id: string, query: ListDeliveriesQuery): Promise<{ deliveries: DeliveryView[]; next_cursor: string | null }> {
    await this.find(this.dataSource.manager, principal, 'delivery.read', id);
    const limit = pageLimit(query);
    const cursor = decodeCursor(query.cursor);
    const params: unknown[] = [id];
    const where = ['d.webhook_id = $1'];
    if (query.status) where.push(`d.status = $${params.push(query.status)}`);
    where.push(...keysetAfter('d', cursor, params));
    const rows = (await this.dataSource.query(
      `${SELECT_DELIVERY} WHERE ${where.join(' AND ')} ORDER BY d.created_at DESC, d.id DESC LIMIT ${limit + 1}`,
      params,
    )) as DeliveryRow[];
    const page = pageOf(rows, limit, creationPosition);
    return { deliveries: page.items.map(toDeliveryView), next_cursor: page.nextCursor };
  }

  /**
   * Attempts a delivery again now, whatever its status (a succeeded one is sent
   * again with the same `webhook-id`, which receivers use to deduplicate). It
   * counts as one more attempt: if it fails, the retry schedule continues from it.
   */
  async retry(principal: Caller, webhookId: string, deliveryId: string): Promise<DeliveryView> {
    await this.dataSource.transaction(async (em) => {
      const webhook = await this.find(em, principal, 'webhook.write', webhookId, true);
      if (webhook.status !== 'active') throw conflict('webhook_disabled', 'The webhook is disabled; enable it before retrying a delivery.');
      const [rows] = (await em.query(
        `UPDATE deliveries SET status = 'pending', next_attempt_at = now(), updated_at = now()
          WHERE id = $1 AND webhook_id = $2 AND NOT in_flight
        RETURNING id`,
        [deliveryId, webhookId],
      )) as [Array<{ id: string }>, number];
      if (rows.length > 0) return;
      const [existing] = (await em.query(`SELECT in_flight FROM deliveries WHERE id = $1 AND webhook_id = $2`, [deliveryId, webhookId])) as Array<{ in_flight: boolean }>;
      if (!existing) throw notFound('delivery_not_found', 'No delivery with that id for this webhook.');
      throw conflict('delivery_in_flight', 'The delivery is being attempted right now.');
    });
    this.dispatcher.wake();
    const [row] = (await this.dataSource.query(`${SELECT_DELIVERY} WHERE d.id = $1`, [deliveryId])) as DeliveryRow[];
    return toDeliveryView(row);
  }

  /** The identity a new subscription is scoped to: an agent key's own; for others the one named, if any. */
  private async subscriptionIdentity(em: EntityManager, principal: Caller, named: string | undefined): Promise<string | null> {
    if (named === undefined) return principal.kind === 'agent' ? principal.identity.id : null;
    const [identity] = (await em.query(
      `SELECT id, organization_id FROM identities WHERE status = 'active' AND ${isUuid(named) ? 'id = $1::uuid' : 'agent_handle = $1'}`,
      [named],
    )) as Array<{ id: string; organization_id: string | null }>;
    requireAccess(principal, 'webhook.subscribe', identity ? { owner: { organizationId: identity.organization_id, identityId: identity.id } } : null);
    return identity.id;
  }

  /** The webhook, if `principal` may do `permission` to it. */
  private async find(em: EntityManager, principal: Caller, permission: Permission, id: string, lock = false): Promise<WebhookRow> {
    const [row] = (await em.query(`${SELECT_WEBHOOK} WHERE w.id = $1 ${lock ? 'FOR UPDATE OF w' : ''}`, [id])) as WebhookRow[];
    requireAccess(principal, permission, row ? { owner: { organizationId: row.organization_id, identityId: row.identity_id } } : null);
    return row;
  }
}

/**
 * `["*"]` stays as it is, a list loses its repeats. A webhook scoped to one identity
 * cannot ask for organization-only types: it would never receive them.
 */
function normalizeEvents(events: string[], identityId: string | null): string[] {
  if (events.includes(ALL_EVENTS)) return [ALL_EVENTS];
  const unique = [...new Set(events)];
  const organizationOnly = unique.filter((type) => ORGANIZATION_ONLY_TYPES.includes(type as EventType));
  if (identityId !== null && organizationOnly.length > 0) {
    const detail = `${organizationOnly.join(', ')} ${organizationOnly.length > 1 ? 'are' : 'is'} only sent to organization-wide webhooks.`;
    throw badRequest('validation_failed', detail, [{ field: 'events', message: detail }]);
  }
  return unique;
}
