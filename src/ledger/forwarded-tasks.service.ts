import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config';
import type { Tx } from '../database/database';
import type { WriteBatch } from '../database/write-batch';
import type { ArtifactChunk } from './entities/task-event.entity';
import { LedgerRepository } from './ledger.repository';
import { LedgerService } from './ledger.service';
import { TaskReadsRepository } from './task-reads.repository';
import type { RoomAsked, TaskJournal } from './task-journal';
import type { ForwardedTask, NewMessage, UpstreamIds } from './task-records';
import { isTerminal, transition, type ReplyState } from './task-state';
import { UsageMeter } from '../usage/usage-meter';
import type { ReportedUsage } from '../usage/usage.repository';

/** What a forwarded task's upstream agent answered, written as a worker's reply would be. */
export interface UpstreamUpdate {
  /** The upstream's own ids for the task, recorded the first time they are known. */
  upstream?: UpstreamIds;
  state?: ReplyState;
  /** An agent message (a repeated messageId is not stored twice): the status message. */
  message?: NewMessage;
  /** Agent messages of the upstream task's history, recorded before the status message (none stored twice). */
  history?: NewMessage[];
  artifacts?: ArtifactChunk[];
  /** What the upstream reported with the answer that ended the task (docs/api.md §18), added to the task's usage. */
  usage?: ReportedUsage;
}

/** What applyUpstream wrote: `terminal` when the task takes no more; the states the state machine refused. */
export interface UpstreamApplied {
  terminal: boolean;
  refused: ReplyState[];
}

/**
 * How many upstream updates (counting each artifact and message of one) one transaction
 * takes at most once its first batch is written, so a chatty stream never holds the
 * task's lock for long; a caller hands updates over in batches of at most this many.
 */
export const UPSTREAM_UPDATES_PER_TRANSACTION = 64;

/**
 * The ledger as the upstream forwarder sees it: a task forwarded to an upstream agent,
 * the requester's message to send on, and what the upstream answered, written through
 * the task's journal as the worker's REST reply is. Never on behalf of a caller: the
 * forwarder reads and writes tasks by their id alone.
 */
@Injectable()
export class ForwardedTasksService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly ledger: LedgerService,
    private readonly repository: LedgerRepository,
    private readonly reads: TaskReadsRepository,
    private readonly usage: UsageMeter,
  ) {}

  /** A forwarded task's state and upstream ids. */
  forwardedTask(taskId: string): Promise<ForwardedTask | null> {
    return this.repository.forwardedTask(taskId);
  }

  /** The requester's message with this id on the task, as stored (the forwarder sends it on). */
  requesterMessage(taskId: string, messageId: string): Promise<NewMessage | null> {
    return this.reads.requesterMessage(taskId, messageId);
  }

  /**
   * What an upstream agent answered — one or several updates that arrived together —
   * written through the journal exactly as the worker's REST reply is (state machine,
   * numbered events, outbox, wake-ups), in one ledger transaction. `terminal` when the
   * task takes no more (canceled meanwhile, say): the updates after that point are
   * dropped. `refused` lists the states the state machine did not allow (those updates
   * are skipped).
   *
   * `more` hands over the updates that arrived while these were written (an upstream's
   * stream sends its events back to back): they join this transaction — the task's row
   * is locked already — until none is waiting, or UPSTREAM_UPDATES_PER_TRANSACTION have
   * been written (the rest wait for the next one). `also` writes the caller's own change
   * in the same transaction, with the journal's last statement (the forwarder's mark of
   * its forward).
   */
  applyUpstream(
    taskId: string,
    updates: readonly UpstreamUpdate[],
    more: () => readonly UpstreamUpdate[] = () => [],
    also?: (unit: Tx | WriteBatch) => Promise<void>,
  ): Promise<UpstreamApplied> {
    return this.ledger.write((tx) => this.recordUpstream(tx, taskId, updates, more, also));
  }

  /** applyUpstream's writes, in its transaction. */
  private async recordUpstream(
    tx: Tx,
    taskId: string,
    updates: readonly UpstreamUpdate[],
    more: () => readonly UpstreamUpdate[],
    also: ((unit: Tx | WriteBatch) => Promise<void>) | undefined,
  ): Promise<UpstreamApplied> {
    // The task's lock, the upstream's ids (the updates carry them; recorded once, a no-op
    // writing no row version after that) and their messages' room: asked together, one
    // round trip.
    const ids = updates.find((update) => update.upstream)?.upstream;
    const messageIds = updates.flatMap((update) => (update.message ? [update.message.messageId] : []));
    const room: RoomAsked | undefined =
      messageIds.length > 0 ? { role: 'agent', messageIds, max: this.config.ledgerMaxMessagesPerTask } : undefined;
    const lock = this.repository.lockTask(taskId, null, tx);
    const recorded = ids && this.repository.setUpstreamIds(taskId, ids, tx);
    const [journal] = await Promise.all([this.ledger.lockWithRoom(tx, taskId, lock, room), recorded]);
    if (!journal) {
      await also?.(tx);
      return { terminal: true, refused: [] };
    }
    const applied = await this.writeUpstream(journal, taskId, updates, more, ids !== undefined, tx);
    if (also) {
      await journal.alongside(also);
    }
    return applied;
  }

  private async writeUpstream(
    journal: TaskJournal,
    taskId: string,
    updates: readonly UpstreamUpdate[],
    more: () => readonly UpstreamUpdate[],
    idsRecorded: boolean,
    tx: Tx,
  ): Promise<UpstreamApplied> {
    const refused: ReplyState[] = [];
    let upstreamRecorded = idsRecorded;
    let written = 0;
    for (let batch = updates; batch.length > 0; batch = written < UPSTREAM_UPDATES_PER_TRANSACTION ? more() : []) {
      for (const update of batch) {
        written += 1 + (update.artifacts?.length ?? 0) + (update.history?.length ?? 0);
        if (update.upstream && !upstreamRecorded) {
          await this.repository.setUpstreamIds(taskId, update.upstream, tx);
          upstreamRecorded = true;
        }
        const room = update.message
          ? await journal.messageRoom(
              'agent',
              update.message.messageId,
              this.config.ledgerMaxMessagesPerTask,
              batch.flatMap((next) => (next.message ? [next.message.messageId] : [])),
            )
          : null;
        const message = room && !room.held ? update.message : undefined;
        const history = await this.newHistory(journal, update.history ?? []);
        const state = update.state === journal.state && !message ? undefined : update.state;
        const artifacts = update.artifacts ?? [];
        if (!state && !message && artifacts.length === 0 && history.length === 0) {
          continue;
        }
        const next = transition(journal.state, { by: 'worker', action: 'reply', to: state ?? null });
        if (!next.ok && next.reason === 'terminal') {
          return { terminal: true, refused };
        }
        if (!next.ok) {
          refused.push(state!);
          continue;
        }
        if (message) {
          room!.requireRoom();
        }
        for (const entry of history) {
          (await journal.messageRoom('agent', entry.messageId, this.config.ledgerMaxMessagesPerTask)).requireRoom();
          await journal.message('agent', entry, 'message', journal.state);
        }
        for (const chunk of artifacts) {
          await journal.artifact(chunk, this.config.ledgerMaxArtifactBytesPerTask);
        }
        if (message) {
          await journal.message('agent', message, 'status', next.state);
        } else if (state) {
          await journal.status(next.state);
        }
        // Once: the answer that ended the task (none is applied after it).
        const usage = update.usage;
        if (usage && isTerminal(journal.state)) {
          const { id, requester } = journal.task;
          await journal.alongside((unit) => this.usage.report(unit, { id, requester }, usage, 'ignore'));
        }
      }
    }
    return { terminal: false, refused };
  }

  /** The messages of an upstream task's history that the task does not hold yet. */
  private async newHistory(journal: TaskJournal, history: readonly NewMessage[]): Promise<NewMessage[]> {
    const ids = history.map((entry) => entry.messageId);
    const fresh: NewMessage[] = [];
    for (const entry of history) {
      const room = await journal.messageRoom('agent', entry.messageId, this.config.ledgerMaxMessagesPerTask, ids);
      if (!room.held) {
        fresh.push(entry);
      }
    }
    return fresh;
  }
}
