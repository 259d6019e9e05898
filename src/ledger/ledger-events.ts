import { Injectable } from '@nestjs/common';
import type { Tx } from '../database/database';
import { EventsService, type EventInput } from '../events/events.service';
import { Metrics } from '../metrics/metrics';
import { toArtifactView, toMessageView, toTaskSummaryView, type TaskSummaryView } from './ledger.view';
import type { WriteBatch } from '../database/write-batch';
import type { JournalEntry } from './task-journal';
import type { MessageRecord, TaskHead } from './task-records';

type TaskEvent = Omit<EventInput, 'organizationId' | 'identityIds'>;

/**
 * A task's changes as events (docs/api.md §8), written in the transaction that made
 * them. Each event goes to the requester's and the worker's organizations (one event
 * each; one when they share it) and to webhooks scoped to either identity; `data.seq`
 * orders a task's events. A change that a stream shows (a status or an artifact
 * update) is also an A2A push notification to the task's push notification configs.
 *
 * - `task.created`: the send that created the task, with its first message;
 * - `task.message`: every later message, from either side;
 * - `task.status`: every later status update (a state change, or an agent message that
 *   comes with its status);
 * - `task.artifact`: every artifact chunk of a reply.
 *
 * A held task (waiting for approval, docs/api.md §16) concerns its requester only: the
 * worker's side hears of it when it is released, with a `task.created` of its own.
 */
@Injectable()
export class LedgerEvents {
  constructor(
    private readonly events: EventsService,
    private readonly metrics: Metrics,
  ) {}

  /**
   * The events of `entries` (a task's changes since they were last written), in the
   * unit of work that writes them. `creation` is the entry that created the task, when
   * this unit created it; `released`, the task's first message when this unit released
   * it to its worker (the worker's `task.created`, before the changes).
   */
  async emit(
    unit: Tx | WriteBatch,
    head: TaskHead,
    entries: readonly JournalEntry[],
    creation: JournalEntry | null,
    released: MessageRecord | null = null,
  ): Promise<void> {
    const [byRequester, byWorker] = [head.requester, head.worker].map((p) => ({
      identityId: p.id,
      organizationId: p.organizationId,
    }));
    const participants = head.held ? [byRequester] : [byRequester, byWorker];
    const task = toTaskSummaryView(head);
    this.metrics.tasksChanged(unit, creation !== null && entries[0] === creation, entries);
    if (released) {
      const created: TaskEvent = {
        type: 'task.created',
        data: { task, seq: released.seq, message: toMessageView(released) },
      };
      await this.events.emitAllForParticipants(unit, [byWorker], [{ event: created }]);
    }
    // All of them in one statement, in order; an entry's push notification goes with its first event.
    const events = entries.flatMap((entry) => {
      const push = streamed(entry) ? { taskId: head.id, seq: entry.seq } : undefined;
      return eventsOf(entry, task, entry === creation).map((event, j) => ({ event, push: j === 0 ? push : undefined }));
    });
    await this.events.emitAllForParticipants(unit, participants, events);
  }
}

/** What a stream shows: status updates and artifact updates (not a requester's message that changed nothing). */
function streamed(entry: JournalEntry): boolean {
  return entry.kind !== 'message' || entry.changesStatus;
}

function eventsOf(entry: JournalEntry, task: TaskSummaryView, creates: boolean): TaskEvent[] {
  const { seq } = entry;
  switch (entry.kind) {
    case 'message': {
      const message = toMessageView(entry.message);
      if (creates) {
        return [{ type: 'task.created', data: { task, seq, message } }];
      }
      const events: TaskEvent[] = [{ type: 'task.message', data: { task, seq, message } }];
      if (entry.changesStatus) {
        const status = {
          state: entry.state,
          ...(entry.message.role === 'agent' ? { message } : {}),
          timestamp: task.status.timestamp,
        };
        events.push({ type: 'task.status', data: { task, seq, status } });
      }
      return events;
    }
    case 'status':
      return [
        { type: 'task.status', data: { task, seq, status: { state: entry.state, timestamp: task.status.timestamp } } },
      ];
    case 'artifact': {
      const { append, lastChunk, ...artifact } = entry.artifact;
      return [
        { type: 'task.artifact', data: { task, seq, artifact: { ...toArtifactView(artifact), append, lastChunk } } },
      ];
    }
  }
}
