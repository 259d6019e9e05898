import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager, type EntitySubscriberInterface, type QueryRunner, type TransactionCommitEvent, type TransactionRollbackEvent } from 'typeorm';
import { CHANGES_CHANNEL, eventsKey, TaskNotifier } from '../ledger/task-notifier';
import { DeliveryDispatcher } from './delivery-dispatcher';
import { newEventId } from './event-id';
import { ORGANIZATION_ONLY_TYPES, type EventType } from './event-types';

export interface EventInput {
  type: EventType;
  /** The organization the event belongs to; null (an unclaimed identity's change) has no subscriber and records nothing. */
  organizationId: string | null;
  /** That organization's identities the event is about, for identity-scoped subscriptions. */
  identityIds?: readonly string[];
  /** The envelope's `data`: resource views as the REST API shows them; never a secret. */
  data: Record<string, unknown>;
}

/** A task change that A2A push notifications report: the task, and the number of its event. */
export interface TaskUpdate {
  taskId: string;
  seq: number;
}

/** One participant of a change that concerns several identities (a task's requester and worker). */
export interface Participant {
  identityId: string;
  organizationId: string | null;
}

/**
 * Writes an event and its deliveries in one statement: the outbox row, one delivery
 * for every active subscription of the organization whose filter and scope match
 * (subscriptions scoped to one identity match when the event is about it;
 * organization-only types, api_key.*, never match them), and — for a task update,
 * $8 and $9 — one delivery for each of the task's A2A push notification configs
 * whose owner (the requester who set it) has not been deleted. The same statement
 * notifies the organization's event streams ($10, delivered by PostgreSQL after the
 * commit, to every instance).
 */
const INSERT_EVENT = `
  WITH event AS (
    INSERT INTO events (id, type, organization_id, identity_ids, data)
    VALUES ($1, $2, $3, $4::uuid[], $5::json)
    RETURNING id, type, organization_id, identity_ids, pg_notify($10, $11) AS notified
  ), push AS (
    INSERT INTO deliveries (push_task_id, push_config_id, push_seq)
    SELECT c.task_id, c.config_id, $9::int
      FROM push_notification_configs c JOIN identities o ON o.id = c.owner_identity_id
     WHERE c.task_id = $8::uuid AND o.status = 'active'
  )
  INSERT INTO deliveries (webhook_id, event_id)
  SELECT w.id, event.id
    FROM event JOIN webhooks w ON w.organization_id = event.organization_id AND w.status = 'active'
   WHERE ($6::uuid IS NULL OR w.id = $6::uuid)
     AND ($6::uuid IS NOT NULL OR (
           ('*' = ANY(w.events) OR event.type = ANY(w.events))
       AND (w.identity_id IS NULL OR (w.identity_id = ANY(event.identity_ids) AND NOT event.type = ANY($7::text[])))))`;

/**
 * The outbox (CONTRACT §8). Other modules call `emit` inside the transaction that
 * makes the change, with that transaction's EntityManager: the event commits or
 * rolls back with the change. Once a transaction that emitted commits, this
 * process's dispatcher is woken; other processes find the work when they poll.
 */
@Injectable()
export class EventsService implements EntitySubscriberInterface {
  /** The organizations each open transaction has emitted for (their streams are woken at commit). */
  private readonly emitted = new WeakMap<QueryRunner, Set<string>>();

  constructor(
    dataSource: DataSource,
    private readonly dispatcher: DeliveryDispatcher,
    private readonly notifier: TaskNotifier,
  ) {
    dataSource.subscribers.push(this);
  }

  /** Records an event in the caller's transaction; returns its id, or null when it concerns no organization. */
  async emit(em: EntityManager, event: EventInput): Promise<string | null> {
    return this.insert(em, event, null);
  }

  /**
   * One event per organization concerned, each about that organization's
   * participants; with `push`, also one A2A push notification per push notification
   * config of the task (the ledger's configs; they ride on this engine).
   */
  async emitForParticipants(
    em: EntityManager, participants: readonly Participant[], event: Omit<EventInput, 'organizationId' | 'identityIds'>, push?: TaskUpdate,
  ): Promise<void> {
    const byOrganization = new Map<string, string[]>();
    for (const { identityId, organizationId } of participants) {
      if (organizationId === null) continue;
      const ids = byOrganization.get(organizationId) ?? [];
      if (!ids.includes(identityId)) ids.push(identityId);
      byOrganization.set(organizationId, ids);
    }
    let first = true;
    for (const [organizationId, identityIds] of byOrganization) {
      // The push notifications go with the first event only: they are per task, not per organization.
      await this.insert(em, { ...event, organizationId, identityIds }, null, first ? push : undefined);
      first = false;
    }
  }

  /** An event for one subscription only, whatever its filter (the `ping` of a webhook test). */
  async emitToWebhook(em: EntityManager, webhookId: string, event: EventInput): Promise<string> {
    return (await this.insert(em, event, webhookId))!;
  }

  private async insert(em: EntityManager, event: EventInput, webhookId: string | null, push?: TaskUpdate): Promise<string | null> {
    const runner = em.queryRunner;
    if (!runner?.isTransactionActive) throw new Error('EventsService.emit must run inside the transaction that makes the change');
    if (event.organizationId === null) return null;
    const id = newEventId();
    await em.query(INSERT_EVENT, [
      id, event.type, event.organizationId, event.identityIds ?? [], JSON.stringify(event.data), webhookId, ORGANIZATION_ONLY_TYPES,
      push?.taskId ?? null, push?.seq ?? null, CHANGES_CHANNEL, `${eventsKey(event.organizationId)}:0`,
    ]);
    const organizations = this.emitted.get(runner) ?? new Set<string>();
    this.emitted.set(runner, organizations.add(event.organizationId));
    return id;
  }

  afterTransactionCommit(event: TransactionCommitEvent): void {
    const organizations = this.emitted.get(event.queryRunner);
    if (event.queryRunner.isTransactionActive || !organizations) return;
    this.emitted.delete(event.queryRunner);
    this.dispatcher.wake();
    // On PostgreSQL the statement's NOTIFY does this; the embedded bus is woken here.
    for (const organizationId of organizations) this.notifier.committed({ taskId: eventsKey(organizationId), seq: 0 });
  }

  afterTransactionRollback(event: TransactionRollbackEvent): void {
    if (!event.queryRunner.isTransactionActive) this.emitted.delete(event.queryRunner);
  }
}
