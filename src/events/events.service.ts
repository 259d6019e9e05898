import { Injectable } from '@nestjs/common';
import type { Tx } from '../database/database';
import { afterCommit } from '../database/unit-of-work';
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
   * The events of one change, in their order, in one statement (a task journal's flush
   * writes all the events of a reply at once): each one event per organization
   * concerned, about that organization's participants; with `push`, also one A2A push
   * notification per push notification config of the task (the ledger's configs; they
   * ride on this engine).
   */
  async emitAllForParticipants(
    tx: Tx,
    participants: readonly Participant[],
    events: ReadonlyArray<{ event: Omit<EventInput, 'organizationId' | 'identityIds'>; push?: TaskUpdate }>,
  ): Promise<void> {
    requireTransaction(tx);
    const organizations = byOrganization(participants);
    const traceparent = currentTraceparent();
    const rows = events.flatMap(({ event, push }) =>
      [...organizations].map(([organizationId, identityIds], i) => ({
        event: { id: newEventId(), type: event.type, organizationId, identityIds, data: event.data, traceparent },
        // The push notifications go with the first organization's event only: they are per task.
        push: i === 0 ? (push ?? null) : null,
        notify: { channel: CHANGES_CHANNEL, payload: `${eventsKey(organizationId)}:0` },
      })),
    );
    if (rows.length === 0) return;
    await this.repository.insertEventsWithDeliveries(rows, tx);
    afterCommit(tx, () => {
      this.dispatcher.wake();
      // On PostgreSQL the statement's NOTIFY does this; the embedded bus is woken here.
      for (const organizationId of organizations.keys())
        this.notifier.committed({ taskId: eventsKey(organizationId), seq: 0 });
    });
  }

  /** An event for one subscription only, whatever its filter (the `ping` of a webhook test). */
  async emitToWebhook(tx: Tx, webhookId: string, event: EventInput): Promise<string> {
    return (await this.insert(tx, event, webhookId))!;
  }

  private async insert(tx: Tx, event: EventInput, webhookId: string | null): Promise<string | null> {
    requireTransaction(tx);
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
        push: null,
        notify: { channel: CHANGES_CHANNEL, payload: `${eventsKey(organizationId)}:0` },
      },
      tx,
    );
    afterCommit(tx, () => {
      this.dispatcher.wake();
      // On PostgreSQL the statement's NOTIFY does this; the embedded bus is woken here.
      this.notifier.committed({ taskId: eventsKey(organizationId), seq: 0 });
    });
    return id;
  }
}

function requireTransaction(tx: Tx): void {
  if (!tx.queryRunner?.isTransactionActive)
    throw new Error('EventsService.emit must run inside the transaction that makes the change');
}

/** The participants' organizations, each with its identities among them (an unclaimed identity has none). */
function byOrganization(participants: readonly Participant[]): Map<string, string[]> {
  const organizations = new Map<string, string[]>();
  for (const { identityId, organizationId } of participants) {
    if (organizationId === null) continue;
    const ids = organizations.get(organizationId) ?? [];
    if (!ids.includes(identityId)) ids.push(identityId);
    organizations.set(organizationId, ids);
  }
  return organizations;
}
