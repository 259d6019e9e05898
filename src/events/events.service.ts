import { Injectable } from '@nestjs/common';
import type { Tx } from '../database/database';
import { WriteBatch } from '../database/write-batch';
import { CHANGES_CHANNEL, eventsKey, TaskNotifier } from './task-notifier';
import { DeliveryDispatcher } from './delivery-dispatcher';
import { newEventId } from './event-id';
import type { EventType } from './event-types';
import { currentTraceparent } from '../tracing/tracing';
import { EventsRepository } from './events.repository';

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
 * The outbox (CONTRACT §8). Other modules call `emit` inside the transaction that
 * makes the change, with that transaction: the event commits or rolls back with the
 * change (EventsRepository.insertEventWithDeliveries writes it and its deliveries).
 * Once a transaction that emitted commits, this process's dispatcher is woken
 * (an after-commit hook of the unit of work); other processes find the work when
 * they poll.
 */
@Injectable()
export class EventsService {
  constructor(
    private readonly repository: EventsRepository,
    private readonly dispatcher: DeliveryDispatcher,
    private readonly notifier: TaskNotifier,
  ) {}

  /** Records an event in the caller's transaction; returns its id, or null when it concerns no organization. */
  async emit(tx: Tx, event: EventInput): Promise<string | null> {
    return this.insert(tx, event, null);
  }

  /**
   * One event per organization concerned, each about that organization's
   * participants; with `push`, also one A2A push notification per push notification
   * config of the task (the ledger's configs; they ride on this engine).
   */
  async emitForParticipants(
    unit: Tx | WriteBatch,
    participants: readonly Participant[],
    event: Omit<EventInput, 'organizationId' | 'identityIds'>,
    push?: TaskUpdate,
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
      await this.insert(unit, { ...event, organizationId, identityIds }, null, first ? push : undefined);
      first = false;
    }
  }

  /** An event for one subscription only, whatever its filter (the `ping` of a webhook test). */
  async emitToWebhook(tx: Tx, webhookId: string, event: EventInput): Promise<string> {
    return (await this.insert(tx, event, webhookId))!;
  }

  private async insert(
    unit: Tx | WriteBatch,
    event: EventInput,
    webhookId: string | null,
    push?: TaskUpdate,
  ): Promise<string | null> {
    if (!(unit instanceof WriteBatch) && !unit.queryRunner?.isTransactionActive)
      throw new Error('EventsService.emit must run inside the transaction (or write batch) that makes the change');
    if (event.organizationId === null) return null;
    const organizationId = event.organizationId;
    const id = newEventId();
    await this.repository.insertEventWithDeliveries(
      {
        id,
        type: event.type,
        organizationId,
        identityIds: event.identityIds ?? [],
        data: event.data,
        traceparent: currentTraceparent(),
      },
      {
        webhookId,
        push: push ?? null,
        notify: { channel: CHANGES_CHANNEL, payload: `${eventsKey(organizationId)}:0` },
      },
      unit,
      (deliveries) => {
        // Once committed: the dispatcher, when there is something to deliver (an event
        // no subscription wants costs it no claim); on PostgreSQL the statement's NOTIFY
        // wakes the event streams, the embedded bus is woken here.
        if (deliveries > 0) this.dispatcher.wake();
        this.notifier.committed({ taskId: eventsKey(organizationId), seq: 0 });
      },
    );
    return id;
  }
}
