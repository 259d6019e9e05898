import { Injectable } from '@nestjs/common';
import type { Tx } from '../database/database';
import { WriteBatch } from '../database/write-batch';
import { isOpen } from '../database/unit-of-work';
import { CHANGES_CHANNEL, eventsKey, TaskNotifier } from './task-notifier';
import { DeliveryDispatcher } from './delivery-dispatcher';
import { newEventId } from './event-id';
import type { EventType } from './event-types';
import { currentTraceparent } from '../tracing/tracing';
import { OutboxRepository, type EventToWrite } from './outbox.repository';

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
 * The outbox (docs/api.md §8). Other modules call `emit` inside the transaction that
 * makes the change, with that transaction: the event commits or rolls back with the
 * change (OutboxRepository.insertEventsWithDeliveries writes it and its deliveries).
 * Once a transaction that emitted commits, this process's dispatcher is woken
 * (an after-commit hook of the unit of work); other processes find the work when
 * they poll.
 */
@Injectable()
export class EventsService {
  constructor(
    private readonly repository: OutboxRepository,
    private readonly dispatcher: DeliveryDispatcher,
    private readonly notifier: TaskNotifier,
  ) {}

  /** Records an event in the caller's transaction; returns its id, or null when it concerns no organization. */
  async emit(tx: Tx, event: EventInput): Promise<string | null> {
    return this.insert(tx, event, null);
  }

  /**
   * The events of one change, in their order, in one statement (a task journal's flush
   * writes all the events of a reply at once; a new task's go into its write batch):
   * each one event per organization concerned, about that organization's participants;
   * with `push`, also one A2A push notification per push notification config of the
   * task (the ledger's configs; they ride on this engine).
   */
  async emitAllForParticipants(
    unit: Tx | WriteBatch,
    participants: readonly Participant[],
    events: ReadonlyArray<{ event: Omit<EventInput, 'organizationId' | 'identityIds'>; push?: TaskUpdate }>,
  ): Promise<void> {
    const organizations = byOrganization(participants);
    const traceparent = currentTraceparent();
    await this.write(
      unit,
      events.flatMap(({ event, push }) =>
        [...organizations].map(([organizationId, identityIds], i) =>
          // The push notifications go with the first organization's event only: they are per task.
          this.toWrite({ ...event, organizationId, identityIds }, traceparent, null, i === 0 ? (push ?? null) : null),
        ),
      ),
    );
  }

  /** An event for one subscription only, whatever its filter (the `ping` of a webhook test). */
  async emitToWebhook(tx: Tx, webhookId: string, event: EventInput): Promise<string> {
    return (await this.insert(tx, event, webhookId))!;
  }

  private async insert(tx: Tx, event: EventInput, webhookId: string | null): Promise<string | null> {
    if (event.organizationId === null) {
      return null;
    }
    const row = this.toWrite({ ...event, organizationId: event.organizationId }, currentTraceparent(), webhookId, null);
    await this.write(tx, [row]);
    return row.event.id;
  }

  private toWrite(
    event: EventInput & { organizationId: string },
    traceparent: string | null,
    webhookId: string | null,
    push: TaskUpdate | null,
  ): EventToWrite {
    const { type, organizationId, identityIds, data } = event;
    return {
      event: { id: newEventId(), type, organizationId, identityIds: identityIds ?? [], data, traceparent },
      webhookId,
      push,
      notify: { channel: CHANGES_CHANNEL, payload: `${eventsKey(organizationId)}:0` },
    };
  }

  private async write(unit: Tx | WriteBatch, rows: EventToWrite[]): Promise<void> {
    if (!isOpen(unit)) {
      throw new Error('EventsService.emit must run inside the transaction (or write batch) that makes the change');
    }
    if (rows.length === 0) {
      return;
    }
    await this.repository.insertEventsWithDeliveries(rows, unit, (deliveries) => {
      // Once committed: the dispatcher, when there is something to deliver (an event no
      // subscription wants costs it no claim); on PostgreSQL the statement's NOTIFY wakes
      // the event streams, the embedded bus is woken here.
      if (deliveries > 0) {
        this.dispatcher.wake();
      }
      for (const organizationId of new Set(rows.map((row) => row.event.organizationId))) {
        this.notifier.committed({ taskId: eventsKey(organizationId), seq: 0 });
      }
    });
  }
}

/** The participants' organizations, each with its identities among them (an unclaimed identity has none). */
function byOrganization(participants: readonly Participant[]): Map<string, string[]> {
  const organizations = new Map<string, string[]>();
  for (const { identityId, organizationId } of participants) {
    if (organizationId === null) {
      continue;
    }
    const ids = organizations.get(organizationId) ?? [];
    if (!ids.includes(identityId)) {
      ids.push(identityId);
    }
    organizations.set(organizationId, ids);
  }
  return organizations;
}
