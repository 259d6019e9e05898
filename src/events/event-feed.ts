import { Injectable } from '@nestjs/common';
import { badRequest } from '../common/app-error';
import type { PageQuery } from '../common/pagination';
import { envelopeOf, type Envelope } from './delivery-queue';
import type { EventType } from './event-types';
import { eventPage, OutboxRepository, type FeedPosition, type FeedRecord, type FeedScope } from './outbox.repository';

export type { FeedPosition, FeedScope } from './outbox.repository';

export interface FeedEvent {
  envelope: Envelope;
  position: FeedPosition;
}

const positionOf = (event: FeedRecord): FeedPosition => ({ txid: event.txid, seq: event.seq });

/**
 * Reads of the outbox in commit order, for the event list and the event stream.
 * Only rows below the visibility horizon are ever shown, so a reader that resumes
 * after a position sees every event committed since, once — even one whose id was
 * allocated before the position's. A transaction still open holds the horizon
 * back (its events, and those committed after it, wait until it ends); rows held
 * back are reported, so a stream looks again shortly instead of at its next wake.
 */
@Injectable()
export class EventFeed {
  constructor(private readonly repository: OutboxRepository) {}

  /** Where an event sits in the stream; 400 when the scope has no such event (never seen, or past retention). */
  async positionOf(scope: FeedScope, eventId: string): Promise<FeedPosition> {
    const position = await this.repository.feedPosition(scope, eventId);
    if (!position) {
      throw badRequest(
        'unknown_event',
        'No event you can see has that id (it may be older than the retention period); list the events to find a recent one.',
      );
    }
    return position;
  }

  /** The stream's "now": every event committed from here on sorts after it. */
  async horizon(): Promise<FeedPosition> {
    return { txid: await this.repository.horizon(), seq: '0' };
  }

  /**
   * Up to `limit` events after `after`, oldest first; `held` when committed events
   * exist beyond the horizon (look again soon).
   */
  async after(
    scope: FeedScope,
    after: FeedPosition,
    types: readonly EventType[] | null,
    limit: number,
  ): Promise<{ events: FeedEvent[]; held: boolean }> {
    const rows = await this.repository.eventsAfter(scope, after, types, limit);
    const shown = rows.findIndex((row) => !row.visible);
    const visible = shown === -1 ? rows : rows.slice(0, shown);
    return {
      events: visible.map((row) => ({ envelope: envelopeOf(row), position: positionOf(row) })),
      held: shown !== -1,
    };
  }

  /** `GET /api/v1/events`: newest first, a keyset page in stream order. */
  async list(
    scope: FeedScope,
    filter: { types: readonly EventType[] | null; after: string | undefined } & PageQuery,
  ): Promise<{ events: Envelope[]; next_cursor: string | null }> {
    const page = eventPage(filter);
    const from = filter.after === undefined ? null : await this.positionOf(scope, filter.after);
    const { items, nextCursor } = await this.repository.listEvents(scope, { types: filter.types, from }, page);
    return { events: items.map(envelopeOf), next_cursor: nextCursor };
  }
}
